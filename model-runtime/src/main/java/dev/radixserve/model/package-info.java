/** GPT-2 model runtime: weights, tokenizer, ONNX graph, ONNX Runtime via FFM, KV pool, sampling. */
package dev.radixserve.model;
