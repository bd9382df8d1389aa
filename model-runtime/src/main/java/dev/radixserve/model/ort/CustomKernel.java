package dev.radixserve.model.ort;

/**
 * One node's kernel of a {@link CustomOp}. {@link #compute} runs on the thread that called
 * {@code Run}; an exception it throws fails that run with the exception's message (as an
 * {@code OrtStatus}), nothing else.
 */
@FunctionalInterface
public interface CustomKernel {

  void compute(KernelContext context);
}
