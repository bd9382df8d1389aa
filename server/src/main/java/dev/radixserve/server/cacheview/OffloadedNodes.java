package dev.radixserve.server.cacheview;

import dev.radixserve.cache.BlockHasher;
import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.cache.TreeSnapshot;
import dev.radixserve.server.kvtier.KvTiers;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where the blocks held only by the cache tiers below the pool go in the view's tree. The radix
 * tree keeps no offloaded nodes (the tiers index blocks by chained hash, outside it); the view
 * puts them back in place: a tier block whose parent hash is a resident block's hash hangs under
 * the resident node holding that block, one whose parent is the hash chain's root under its
 * namespace's root, and so on down the tiers' own chains. A run of tier blocks without a branch,
 * held by the same tiers, is one offloaded node (as a radix edge would be).
 *
 * <p>A tier block that is also resident (the tiers are write-through: a block recomputed after
 * its offload is in both) is shown only as resident. One whose parent is neither resident nor
 * held (its parent left the tiers first) cannot be reached by a match: counted as unplaced, not
 * shown. Built on the view's thread from one sample.
 */
final class OffloadedNodes {

  /** Offloaded node ids are negative, within JavaScript's exact integers (2^53). */
  private static final long SYNTHETIC_ROOTS = -(1L << 52);

  /**
   * One offloaded node: a chain of tier blocks.
   *
   * @param branchAt tokens into the parent's edge where the chain leaves it; -1 at its end
   */
  record Chain(long id, int[] tokens, int blocks, List<String> media, int branchAt,
      List<Chain> children) {}

  static final OffloadedNodes NONE = new OffloadedNodes(Map.of(), Map.of(), Map.of(), 0);

  private final Map<Long, List<Chain>> byNode;
  private final Map<String, List<Chain>> byNamespace;
  /** Ids for namespaces that hold only offloaded blocks (no resident root to hang them on). */
  private final Map<String, Long> syntheticRoots;
  private final int unplaced;

  private OffloadedNodes(Map<Long, List<Chain>> byNode, Map<String, List<Chain>> byNamespace,
      Map<String, Long> syntheticRoots, int unplaced) {
    this.byNode = byNode;
    this.byNamespace = byNamespace;
    this.syntheticRoots = syntheticRoots;
    this.unplaced = unplaced;
  }

  /** Chains hanging under resident node {@code id}. */
  List<Chain> under(long id) {
    return byNode.getOrDefault(id, List.of());
  }

  /** Chains starting at block 0 of {@code namespace}. */
  List<Chain> atRoot(String namespace) {
    return byNamespace.getOrDefault(namespace, List.of());
  }

  /** Namespaces with offloaded blocks only, and the ids of their roots in the view. */
  Map<String, Long> syntheticRoots() {
    return syntheticRoots;
  }

  /** Tier blocks held only by a tier that no chain from a resident block or a root reaches. */
  int unplaced() {
    return unplaced;
  }

  static OffloadedNodes place(CacheSample sample) {
    if (sample.tiers() == null || sample.offloaded().isEmpty()) {
      return NONE;
    }
    return new Builder(sample.tiers().hasher(), sample.offloaded()).build(sample.tree());
  }

  private static final class Builder {
    private final BlockHasher hasher;
    private final List<KvTiers.IndexedBlock> index;
    /** Resident whole blocks: hash → (node id, tokens into its edge at the block's end). */
    private final Map<Long, long[]> resident = new HashMap<>();
    private final Map<Long, List<KvTiers.IndexedBlock>> byParent = new HashMap<>();
    private int placed;

    Builder(BlockHasher hasher, List<KvTiers.IndexedBlock> index) {
      this.hasher = hasher;
      this.index = index;
    }

    OffloadedNodes build(TreeSnapshot tree) {
      List<String> namespaces = new ArrayList<>();
      for (TreeSnapshot.Root r : tree.roots()) {
        namespaces.add(r.namespace());
        for (TreeSnapshot.Node c : r.children()) {
          hashResident(c, hasher.root(), CacheNamespace.saltOf(r.namespace()));
        }
      }
      int both = 0;
      for (KvTiers.IndexedBlock b : index) {
        if (resident.containsKey(b.hash())) {
          both++;
        } else {
          byParent.computeIfAbsent(b.parent(), k -> new ArrayList<>()).add(b);
        }
      }
      Map<Long, List<Chain>> byNode = new HashMap<>();
      for (Map.Entry<Long, long[]> e : resident.entrySet()) {
        List<KvTiers.IndexedBlock> kids = byParent.get(e.getKey());
        if (kids != null) {
          long node = e.getValue()[0];
          int at = (int) e.getValue()[1];
          int edge = (int) e.getValue()[2];
          List<Chain> chains = byNode.computeIfAbsent(node, k -> new ArrayList<>());
          kids.forEach(k -> chains.add(chain(k, at == edge ? -1 : at)));
        }
      }
      byNode.values().forEach(l -> l.sort((a, b) -> Long.compare(b.id(), a.id())));
      Map<String, List<Chain>> byNamespace = new LinkedHashMap<>();
      for (KvTiers.IndexedBlock b : byParent.getOrDefault(hasher.root(), List.of())) {
        String ns = namespaceOf(b, namespaces);
        if (ns != null) {
          byNamespace.computeIfAbsent(ns, k -> new ArrayList<>()).add(chain(b, -1));
        }
      }
      Map<String, Long> synthetic = new LinkedHashMap<>();
      for (String ns : byNamespace.keySet()) {
        if (!namespaces.contains(ns)) {
          synthetic.put(ns, SYNTHETIC_ROOTS - 1 - (ns.hashCode() & 0x7fffffffL));
        }
      }
      return new OffloadedNodes(byNode, byNamespace, synthetic, index.size() - both - placed);
    }

    /** Records the hash of every whole block of {@code n}'s edge and below. */
    private void hashResident(TreeSnapshot.Node n, long parent, String salt) {
      int[] edge = n.tokenIds();
      int b = hasher.blockSize();
      long h = parent;
      for (int i = 0; (i + 1) * b <= edge.length; i++) {
        h = hasher.block(h, edge, i * b, i == 0 ? salt : null);
        resident.put(h, new long[] {n.id(), (long) (i + 1) * b, edge.length});
      }
      if (edge.length % b != 0) {
        return; // a partial leaf: nothing below it
      }
      for (TreeSnapshot.Node c : n.children()) {
        hashResident(c, h, null);
      }
    }

    /** Block 0's namespace: its salt's, or the one whose block-0 hash of its tokens it has. */
    private String namespaceOf(KvTiers.IndexedBlock b, List<String> namespaces) {
      if (b.salt() != null) {
        return "salt:" + b.salt();
      }
      List<String> candidates = new ArrayList<>(namespaces);
      candidates.add(CacheNamespace.DEFAULT);
      for (String ns : candidates) {
        if (hasher.block(hasher.root(), b.tokens(), 0, CacheNamespace.saltOf(ns)) == b.hash()) {
          return ns;
        }
      }
      return null;
    }

    /** The chain from {@code first} down to its first branch or change of tiers. */
    private Chain chain(KvTiers.IndexedBlock first, int branchAt) {
      List<KvTiers.IndexedBlock> run = new ArrayList<>(List.of(first));
      KvTiers.IndexedBlock last = first;
      while (true) {
        List<KvTiers.IndexedBlock> next = byParent.getOrDefault(last.hash(), List.of());
        if (next.size() != 1 || !next.getFirst().media().equals(first.media())
            || run.size() > index.size()) {
          break;
        }
        last = next.getFirst();
        run.add(last);
      }
      placed += run.size();
      int b = hasher.blockSize();
      int[] tokens = new int[run.size() * b];
      for (int i = 0; i < run.size(); i++) {
        System.arraycopy(run.get(i).tokens(), 0, tokens, i * b, b);
      }
      List<Chain> children = new ArrayList<>();
      for (KvTiers.IndexedBlock k : byParent.getOrDefault(last.hash(), List.of())) {
        children.add(chain(k, -1));
      }
      children.sort((x, y) -> Long.compare(y.id(), x.id()));
      return new Chain(idOf(first.hash()), tokens, run.size(), first.media(), branchAt,
          List.copyOf(children));
    }
  }

  /** A chain's id: from its first block's hash, negative, and exact in JavaScript. */
  static long idOf(long hash) {
    return -1 - (hash >>> 12);
  }
}
