"""A transformers Llama computed as radixserve serves it at `--quantization int8` on the CPU, for
training a small model that behaves the same served (train_copy_llama.py --fake-quant int8).

- Weights (every nn.Linear, the LM head, the tied embedding table): BlockQuantizer's symmetric
  int8 blocks of 64 along the input dimension: m = the block's value of largest magnitude, sign
  kept, scale = m / -128, w' = scale * clamp(round(w / scale), -128, 127).
- Activations into each nn.Linear: MatMulNBits at accuracy level 4 quantizes its input to int8
  in blocks of the weights' block length, symmetric, scale = max |x| / 127, as MLAS does.

Gradients pass straight through both (x + (q(x) - x).detach()). The embedding lookup reads the
quantized table with no activation rounding, as GatherBlockQuantized does.
"""
import torch
import torch.nn.functional as F

BLOCK = 64


def weight(w, block=BLOCK):
    rows, cols = w.shape
    b = w.reshape(rows, cols // block, block)
    extreme = b.gather(-1, b.abs().argmax(-1, keepdim=True))
    scale = extreme / -128.0
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    return (torch.clamp(torch.round(b / scale), -128, 127) * scale).reshape(rows, cols)


def activation(x, block=BLOCK):
    b = x.reshape(*x.shape[:-1], x.shape[-1] // block, block)
    scale = b.abs().amax(-1, keepdim=True) / 127.0
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    return (torch.clamp(torch.round(b / scale), -127, 127) * scale).reshape(x.shape)


def _through(x, fn):
    return x + (fn(x) - x).detach()


def install(model):
    """Patches every nn.Linear and nn.Embedding of model to compute on the int8 grid."""
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            assert module.in_features % BLOCK == 0, module
            module.forward = (lambda m: lambda x: F.linear(
                _through(x, activation), _through(m.weight, weight), m.bias))(module)
        elif isinstance(module, torch.nn.Embedding):
            assert module.embedding_dim % BLOCK == 0, module
            module.forward = (lambda m: lambda ids: F.embedding(
                ids, _through(m.weight, weight), m.padding_idx))(module)


def snap(model):
    """Writes every patched weight onto its int8 grid, so that quantizing it again (the server's
    int8) gives back exactly these values: the block's extreme is -128 * scale, a power-of-two
    multiple, so the scale and every code are recovered."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (torch.nn.Linear, torch.nn.Embedding)):
                module.weight.copy_(weight(module.weight))
