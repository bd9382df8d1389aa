package dev.radixserve.server.engine;

/**
 * Prompt blocks shared by the choices of one request when prefix caching is off: freed when the
 * last choice lets go.
 */
final class SharedBlocks {

  private final int[] blockIds;
  private final BlockSource pool;
  private int refs;

  SharedBlocks(int[] blockIds, BlockSource pool) {
    this.blockIds = blockIds.clone();
    this.pool = pool;
  }

  PrefixHold newHold() {
    refs++;
    return new Hold();
  }

  private final class Hold implements PrefixHold {
    private boolean released;

    @Override
    public PrefixHold share() {
      return newHold();
    }

    @Override
    public void release() {
      if (released) {
        throw new IllegalStateException("shared prompt blocks released twice");
      }
      released = true;
      refs--;
      if (refs == 0) {
        pool.free(blockIds);
      }
    }

    @Override
    public int[] privateBlocks() {
      return blockIds;
    }
  }
}
