// The radix cache view: fetches a bounded snapshot (/cache/tree), then follows the live stream
// (/cache/events: events, and diffs between snapshots) and draws the tree as SVG.
// No dependencies. The API key, when the server has one, travels in the session cookie that
// /cache/login set (EventSource cannot send an Authorization header).
'use strict';
(() => {
  const ROW = 36;           // px per leaf row: the label above the edge, numbers below
  const COL = 240;          // px per tree level
  const BEND = 48;          // px at the end of a level where an edge bends to its child
  const PAD = 24;
  const LABEL_CHARS = 26;
  const LABEL_SPACE = 290;  // px right of a dot its label and numbers may take
  const MAX_EVENTS = 200;   // events kept in the list
  const REFETCH_MS = 1000;  // at most one tree refetch a second for diffs outside the view
  const FLASH_MS = 1200;    // a changed node's halo shrinks and fades over this time
  const GHOST_MS = 1500;    // an evicted node fades out where it was
  const CULL = 600;         // px around the viewport that are drawn too

  const $ = (id) => document.getElementById(id);
  const view = {
    nodes: new Map(),       // id -> node as the server sent it (+ "more" when it left some out)
    version: 0,
    header: null,
    collapsed: new Set(),
    expand: new Set(),
    budget: 300,
    search: '',
    request: '',
    matches: new Set(),
    onPath: new Set(),
    matchEnds: new Set(),
    selected: null,
    paused: false,
    flashes: new Map(),     // id -> {kind, until}
    ghosts: [],             // evicted nodes fading out where they were: {x, y, text, until}
    layout: new Map(),      // id -> {x, y}
    items: [],              // laid out nodes and "more" rows: {n | more, x, y, collapsed}
    edges: [],              // laid out edges: {x1, y1, x2, y2, onPath}
    width: 0,
    height: 0,
    layoutDirty: true,
    recentMs: [],           // the last 500 frame times (layout when needed + paint), for benchmarks
    pending: [],            // diffs that arrived while a tree fetch was under way
    fetching: false,
    streamLive: false,
    scrollToMatch: false,   // a request highlight arrived: bring its match into view once      // the event stream's hello arrived and it has not failed since
    again: false,
    refetchTimer: null,
    lastFetch: 0,
    renderQueued: false,
    eventCount: 0,
    stats: { renders: 0, lastRenderMs: 0, maxRenderMs: 0, lastFrameMs: 0, lastFetchMs: 0,
             buildMs: 0, domMs: 0, diffs: 0, refetches: 0, droppedFrames: 0, shown: 0,
             drawn: 0 },
  };
  window.cacheView = view;  // for tests, benchmarks and curious operators

  // ---- data ----

  async function fetchTree() {
    if (view.fetching) {
      view.again = true;
      return;
    }
    view.fetching = true;
    view.stats.refetches++;
    const t0 = performance.now();
    const p = new URLSearchParams({ max_nodes: String(view.budget) });
    if (view.search) p.set('q', view.search);
    if (view.request) p.set('request', view.request);
    if (view.expand.size) p.set('expand', [...view.expand].slice(-50).join(','));
    try {
      const r = await fetch('/cache/tree?' + p, { cache: 'no-store', credentials: 'same-origin' });
      if (r.status === 401) {
        location.reload();  // the session cookie is gone: back to the login form
        return;
      }
      const j = await r.json();
      if (!r.ok) throw new Error(j.error ? j.error.message : 'HTTP ' + r.status);
      view.stats.lastFetchMs = performance.now() - t0;
      if (view.streamLive && !view.paused) setStatus('live', 'live');  // past an earlier error
      load(j);
    } catch (e) {
      setStatus('error: ' + e.message, 'bad');
      if (!view.header) {
        $('loading').textContent = 'loading… (' + e.message + '; retrying)';
        refetchSoon(REFETCH_MS);  // no snapshot yet: nothing else would ask again
      }
    } finally {
      view.fetching = false;
      view.lastFetch = performance.now();
      if (view.again) {
        view.again = false;
        fetchTree();
      }
    }
  }

  view.refetch = () => fetchTree();

  function load(j) {
    view.nodes = new Map();
    for (const n of j.nodes) view.nodes.set(n.id, n);
    view.version = j.version;
    view.header = j;
    view.matches = new Set(j.matches || []);
    setNote('search-result', view.search
      ? `${j.matches_total} ${j.matches_total === 1 ? 'edge matches' : 'edges match'}`
        + (j.matches_total > (j.matches || []).length ? ` (first ${j.matches.length} shown)` : '')
      : '');
    showRequest(j.request);
    const pending = view.pending.filter((d) => d.version > view.version);
    view.pending = [];
    pending.forEach(applyDiff);
    requestRender();
  }

  function showRequest(r) {
    view.onPath = new Set();
    view.matchEnds = new Set();
    if (!r) {
      setNote('request-result', '');
      return;
    }
    if (!r.found) {
      setNote('request-result', 'no admission seen for ' + r.id
        + ' (the last 4096 are kept)');
      return;
    }
    const parts = [];
    for (const m of r.matches) {
      m.path.forEach((id) => view.onPath.add(id));
      if (m.in_cache) view.matchEnds.add(m.node);
      parts.push(`${m.request}: matched ${m.matched_tokens} of ${m.queried_tokens} tokens`
        + (m.in_cache ? ` (ends at #${m.node})` : ' (since evicted)'));
    }
    setNote('request-result', parts.join('; '));
    view.scrollToMatch = view.matchEnds.size > 0;
  }

  // a toolbar note: cut to the room it has, in full as its tooltip
  function setNote(id, text) {
    $(id).textContent = text;
    $(id).title = text;
  }

  function onDiff(d) {
    if (view.paused) return;
    view.stats.diffs++;
    if (view.fetching || view.version === 0) {
      view.pending.push(d);
      return;
    }
    applyDiff(d);
    requestRender();
  }

  function applyDiff(d) {
    if (d.version <= view.version) return;
    if (d.resync || d.from !== view.version) {
      refetchSoon(0);
      return;
    }
    let outside = false;
    for (const n of d.upserts) {
      const old = view.nodes.get(n.id);
      if (old) {
        if (old.more) {
          n.more = old.more;
          if (old.children !== n.children || old.subtree.nodes !== n.subtree.nodes) outside = true;
        }
        view.nodes.set(n.id, n);
      } else if (n.root) {
        view.nodes.set(n.id, n);
      } else {
        const parent = view.nodes.get(n.parent);
        if (parent && !parent.more) {
          view.nodes.set(n.id, n);
          flash(n.id, 'stored');
        } else {
          outside = true;  // inside a part the budget left out
        }
      }
    }
    for (const id of d.removed) {
      if (view.nodes.has(id)) {
        const at = view.layout.get(id);
        if (at) {
          view.ghosts.push({ x: at.x, y: at.y, text: view.nodes.get(id).text,
                             until: performance.now() + GHOST_MS });
        }
        view.nodes.delete(id);
      }
    }
    view.version = d.version;
    view.header = Object.assign({}, view.header, { totals: d.totals, pool: d.pool,
                                                  clock: d.clock, event_seq: d.event_seq });
    if (outside || view.nodes.size > view.budget * 1.5) refetchSoon(REFETCH_MS);
  }

  function refetchSoon(minGap) {
    if (view.refetchTimer) return;
    const wait = Math.max(0, view.lastFetch + minGap - performance.now());
    view.refetchTimer = setTimeout(() => {
      view.refetchTimer = null;
      fetchTree();
    }, wait);
  }

  function onEvents(batch) {
    if (view.paused) return;
    const list = $('events');
    const items = batch.events.slice(-MAX_EVENTS);
    const frag = document.createDocumentFragment();
    for (const li of list.querySelectorAll('li.latest')) li.classList.remove('latest');
    for (const e of items) {
      if (e.type === 'stored') flash(e.node, 'stored');
      else if (e.type === 'split') { flash(e.upper, 'split'); flash(e.node, 'split'); }
      else if (e.type === 'lock') flash(e.node, 'lock');
      const li = document.createElement('li');
      li.className = e.type + ' latest';
      li.dataset.node = e.node;
      if (e.type === 'match') li.dataset.request = e.request;
      li.title = JSON.stringify(e);
      const time = document.createElement('time');
      time.textContent = new Date(e.t).toISOString().slice(11, 23);
      const kind = document.createElement('b');
      kind.textContent = e.type;
      li.append(time, kind, ' ' + describe(e));
      frag.prepend(li);
    }
    list.prepend(frag);
    while (list.childElementCount > MAX_EVENTS) list.lastElementChild.remove();
    view.eventCount += batch.events.length + (batch.skipped || 0);
    $('event-count').textContent = `${view.eventCount} seen`
      + (batch.dropped ? ` · ${batch.dropped} dropped by the server` : '')
      + (view.stats.droppedFrames ? ` · ${view.stats.droppedFrames} frames lost` : '');
    requestPaint();  // the flashes; the tree itself changes with the next diff
  }

  function describe(e) {
    const ns = e.namespace ? ` [${e.namespace}]` : '';
    switch (e.type) {
      case 'stored': return `#${e.node} under #${e.parent}${ns} · ${e.blocks} blk · path `
        + `${e.path_tokens} tok · “${oneLine(e.text)}”`;
      case 'split': return `#${e.node}: upper ${e.upper_tokens} tok became #${e.upper}${ns}`;
      case 'evicted': return `#${e.node}${ns} · ${e.blocks} blk freed · “${oneLine(e.text)}”`;
      case 'lock': return `#${e.node}${ns} · lock ${e.lock}`;
      case 'unlock': return `#${e.node}${ns} · lock ${e.lock}`;
      case 'match': return `${e.request} · ${e.matched_tokens}/${e.queried_tokens} tok`
        + ` · ends at #${e.node}${ns}`;
      default: return JSON.stringify(e);
    }
  }

  function flash(id, kind) {
    view.flashes.set(id, { kind, until: performance.now() + FLASH_MS });
  }

  // ---- drawing ----

  function requestRender() {
    view.layoutDirty = true;
    requestPaint();
  }

  function requestPaint() {
    if (view.renderQueued) return;
    view.renderQueued = true;
    requestAnimationFrame(() => {
      view.renderQueued = false;
      const t0 = performance.now();
      if (view.layoutDirty) {
        view.layoutDirty = false;
        layoutTree();
        renderHeader();
        renderDetails();
      }
      paint(t0);
      // after paint: the SVG has its new width, so the scroll can reach the deepest column
      // (the scroll event then paints what came into view)
      if (view.scrollToMatch) revealMatch();
    });
  }

  // Places every node in the model (the budget bounds how many): one row per leaf, collapsed
  // node or "more" summary, a parent on its first child's row, a column per depth.
  function layoutTree() {
    const kids = new Map();
    const roots = [];
    for (const n of view.nodes.values()) {
      if (n.root) {
        roots.push(n);
      } else if (view.nodes.has(n.parent)) {
        let list = kids.get(n.parent);
        if (!list) kids.set(n.parent, list = []);
        list.push(n);
      }
    }
    roots.sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
    for (const list of kids.values()) list.sort((a, b) => a.id - b.id);
    const items = [];   // {n, x, y, collapsed} or {more: n, x, y}
    const edges = [];   // {x1, y1, x2, y2, onPath}
    const layout = new Map();
    let row = 0;
    let maxDepth = 0;
    const visit = (n, depth) => {
      maxDepth = Math.max(maxDepth, depth);
      const collapsed = view.collapsed.has(n.id);
      const children = collapsed ? [] : (kids.get(n.id) || []);
      const ys = children.map((c) => visit(c, depth + 1));
      let moreAt = null;
      if (!collapsed && n.more) {
        moreAt = { more: n, x: PAD + (depth + 1) * COL, y: PAD + (row++) * ROW };
        items.push(moreAt);
        ys.push(moreAt.y);
        maxDepth = Math.max(maxDepth, depth + 1);
      }
      // level with its first child: a parent stays in view next to the top of its subtree
      const y = ys.length ? ys[0] : PAD + (row++) * ROW;
      const x = PAD + depth * COL;
      layout.set(n.id, { x, y });
      for (const c of children) {
        const at = layout.get(c.id);
        edges.push({ x1: x, y1: y, x2: at.x, y2: at.y,
                     onPath: view.onPath.has(n.id) && view.onPath.has(c.id) });
      }
      if (moreAt) edges.push({ x1: x, y1: y, x2: moreAt.x, y2: moreAt.y, onPath: false });
      items.push({ n, x, y, collapsed });
      return y;
    };
    for (const r of roots) {
      visit(r, 0);
      row += 0.5;  // a gap between namespaces
    }
    view.items = items;
    view.edges = edges;
    view.layout = layout;
    // the deepest column's label and numbers run LABEL_SPACE px right of its dot: inside the
    // SVG, so #tree-wrap scrolls to them instead of the SVG cutting them off
    view.width = PAD * 2 + maxDepth * COL + LABEL_SPACE;
    view.height = PAD * 2 + row * ROW;
    view.stats.shown = layout.size;
    // "empty" only once a snapshot has said so; until the first one arrives, "loading…"
    $('loading').hidden = view.header !== null;
    $('empty').hidden = view.header === null || roots.length > 0;
  }

  // Scrolls a highlighted match's end node (and its label) into view once, however deep it is.
  function revealMatch() {
    view.scrollToMatch = false;
    const wrap = $('tree-wrap');
    for (const id of view.matchEnds) {
      const at = view.layout.get(id);
      if (!at) continue;
      if (at.x + LABEL_SPACE > wrap.scrollLeft + wrap.clientWidth || at.x < wrap.scrollLeft) {
        wrap.scrollLeft = Math.max(0, at.x + LABEL_SPACE - wrap.clientWidth);
      }
      if (at.y + ROW > wrap.scrollTop + wrap.clientHeight || at.y - ROW < wrap.scrollTop) {
        wrap.scrollTop = Math.max(0, at.y - wrap.clientHeight / 2);
      }
      return;
    }
  }

  // Draws what lies in (or near) the scrolled viewport only, so the cost of a frame follows
  // the window's size, not the tree's.
  function paint(t0) {
    const wrap = $('tree-wrap');
    const top = wrap.scrollTop - CULL;
    const bottom = wrap.scrollTop + wrap.clientHeight + CULL;
    const left = wrap.scrollLeft - CULL;
    const right = wrap.scrollLeft + wrap.clientWidth + CULL;
    const inY = (y) => y >= top && y <= bottom;
    const inX = (x) => x >= left && x <= right;
    const now = performance.now();
    const out = [];
    for (const e of view.edges) {
      if (Math.max(e.y1, e.y2) >= top && Math.min(e.y1, e.y2) <= bottom && e.x2 >= left
          && e.x1 <= right) {
        out.push(edgePath(e.x1, e.y1, e.x2, e.y2, e.onPath));
      }
    }
    let drawn = 0;
    for (const it of view.items) {
      if (!inY(it.y) || !inX(it.x)) continue;
      drawn++;
      out.push(it.more ? moreShape(it.more, it.x, it.y) : nodeShape(it.n, it.x, it.y,
        it.collapsed, now));
    }
    for (const [id, f] of view.flashes) if (f.until <= now) view.flashes.delete(id);
    view.ghosts = view.ghosts.filter((g) => g.until > now);
    for (const g of view.ghosts) {
      const left = ((g.until - now) / GHOST_MS).toFixed(2);
      out.push(`<g class="ghost" opacity="${left}" transform="translate(${g.x},${g.y})">`
        + `<circle r="6"/><text class="label" x="10" y="-6">evicted “${esc(short(g.text))}”`
        + '</text></g>');
    }
    const svg = $('tree');
    const tBuilt = performance.now();
    if (svg.getAttribute('width') !== String(view.width)) svg.setAttribute('width', view.width);
    if (svg.getAttribute('height') !== String(view.height)) {
      svg.setAttribute('height', view.height);
    }
    svg.innerHTML = out.join('');
    const tDom = performance.now();
    svg.getBoundingClientRect();  // include style and layout in the measured time
    const ms = performance.now() - t0;
    view.stats.buildMs = tBuilt - t0;
    view.stats.domMs = tDom - tBuilt;
    view.stats.renders++;
    view.stats.lastRenderMs = ms;
    view.stats.maxRenderMs = Math.max(view.stats.maxRenderMs, ms);
    view.recentMs.push(ms);
    if (view.recentMs.length > 500) view.recentMs.shift();
    view.stats.drawn = drawn;
    requestAnimationFrame(() => setTimeout(() => {
      view.stats.lastFrameMs = performance.now() - t0;
    }, 0));
    if ([...view.flashes.values()].some((f) => f.until > now) || view.ghosts.length) {
      // animation steps (halos shrinking, ghosts fading), about 5 a second: a repaint of the
      // viewport, not a new layout
      setTimeout(requestPaint, Math.max(200, 4 * ms));
    }
  }

  function moreShape(n, x, y) {
    const m = n.more;
    return `<g class="node more" data-more="${n.id}" transform="translate(${x},${y})">`
      + '<rect x="-6" y="-6" width="12" height="12"/>'
      + `<text class="label" x="10" y="-6">+${m.children} more: ${m.nodes} node`
      + `${m.nodes === 1 ? '' : 's'}</text><text class="meta" x="10" y="14">${m.blocks} blk · `
      + `${m.tokens} tok${m.locked ? ' · ' + m.locked + ' locked' : ''} · click to show</text>`
      + '</g>';
  }

  // Straight along the parent's row (between its label and its numbers), then a bend to the
  // child in the last BEND px of the level, so edges never cross text.
  function edgePath(x1, y1, x2, y2, onPath) {
    const bend = x2 - BEND;
    const mx = bend + BEND / 2;
    return `<path class="edge${onPath ? ' on-path' : ''}" d="M${x1},${y1}H${bend}C${mx},${y1}`
      + ` ${mx},${y2} ${x2},${y2}"/>`;
  }

  function nodeShape(n, x, y, collapsed, now) {
    const cls = ['node'];
    if (n.root) cls.push('root');
    if (n.lock > 0) cls.push('locked');
    if (n.evictable) cls.push('evictable');
    if (n.offloaded) cls.push('offloaded');
    if (view.onPath.has(n.id)) cls.push('on-path');
    if (view.matchEnds.has(n.id)) cls.push('match-end');
    if (view.matches.has(n.id)) cls.push('match');
    if (view.selected === n.id) cls.push('selected');
    if (collapsed) cls.push('collapsed');
    const r = n.root ? 7 : Math.min(12, 4 + 2 * Math.log2(1 + n.blocks));
    // Animated by re-rendering (attributes, not CSS animations: the SVG is rebuilt each time)
    let halo = '';
    const f = view.flashes.get(n.id);
    if (f && f.until > now) {
      const left = (f.until - now) / FLASH_MS;
      halo = `<circle class="halo ${f.kind}" r="${(r + 12 * left).toFixed(1)}"`
        + ` opacity="${left.toFixed(2)}"/>`;
    } else if (f) {
      view.flashes.delete(n.id);
    }
    let label;
    let meta;
    if (n.root) {
      label = n.namespace ? `namespace “${esc(n.namespace)}”` : 'default namespace';
      meta = `${n.subtree.nodes} nodes · ${n.subtree.blocks} blk`;
    } else {
      label = '“' + esc(short(n.text)) + '”';
      meta = n.offloaded ? `${n.tokens} tok · ${n.offloaded_blocks} blk offloaded · ${n.medium}`
        : `${n.tokens} tok · ${n.blocks} blk · ${n.hits} hit${n.hits === 1 ? '' : 's'}`;
      if (n.lock > 0) meta += ` · <tspan class="lockcount">lock ${n.lock}</tspan>`;
      if (n.evictable) meta += ' · evictable';
    }
    if (collapsed && n.subtree.nodes > 1) meta += ` · +${n.subtree.nodes - 1} hidden`;
    const data = `data-id="${n.id}"${n.root ? '' : ` data-parent="${n.parent}"`}`
      + ` data-tokens="${n.tokens}" data-blocks="${n.blocks}" data-lock="${n.lock}"`
      + ` data-hits="${n.hits}" data-children="${n.children}" data-evictable="${n.evictable}"`
      + (n.offloaded ? ` data-medium="${n.medium}"` : '');
    return `<g class="${cls.join(' ')}" ${data} transform="translate(${x},${y})">${halo}`
      + `<circle class="dot" r="${r.toFixed(1)}"/>`
      + `<text class="label" x="${r + 4}" y="-6">${label}</text>`
      + `<text class="meta" x="${r + 4}" y="14">${meta}</text></g>`;
  }

  function renderHeader() {
    const h = view.header;
    if (!h) return;
    const t = h.totals;
    $('total-nodes').textContent = t.nodes;
    $('total-blocks').textContent = t.blocks;
    $('total-offloaded').textContent = t.offloaded_blocks === undefined ? '–'
      : t.offloaded_blocks;
    $('total-locked').textContent = t.locked;
    $('total-evictable').textContent = t.evictable;
    $('total-namespaces').textContent = t.namespaces;
    $('pool').textContent = h.pool ? `${h.pool.free} free / ${h.pool.total}` : '–';
    if (h.stats) {
      $('hit-rate').textContent = h.stats.query_tokens
        ? (100 * h.stats.hit_tokens / h.stats.query_tokens).toFixed(1) + ' %' : '–';
    }
    $('version').textContent = `v${view.version}` + (h.truncated ? ` · ${view.stats.shown}`
      + ` of ${t.nodes + t.namespaces} shown` : '');
    if (h.prefix_caching === false) setStatus('prefix caching is off', 'bad');
  }

  function renderDetails() {
    const box = $('node-details');
    const n = view.selected === null ? null : view.nodes.get(view.selected);
    if (!n) {
      box.textContent = 'Click a node for its details; double-click collapses it.';
      return;
    }
    const clock = view.header ? view.header.clock : 0;
    const rows = n.root
      ? [['namespace', n.namespace || '(default)'], ['node', '#' + n.id]]
      : n.offloaded
      ? [['node', `#${n.id} (parent #${n.parent}, depth ${n.depth})`], ['tokens', n.tokens],
         ['offloaded', `${n.offloaded_blocks} blk in ${n.media.join(', ')} (none in the pool)`]]
        .concat(n.branch_at === undefined ? [] : [['leaves parent at token', n.branch_at]])
      : [['node', `#${n.id} (parent #${n.parent}, depth ${n.depth})`],
         ['tokens', n.tokens], ['blocks', n.blocks], ['lock count', n.lock],
         ['hits', n.hits], ['last access', `clock ${n.last_access} (${clock - n.last_access}`
           + ' ticks ago)'], ['evictable', n.evictable ? 'yes (unlocked leaf)' : 'no']];
    rows.push(['children', n.children], ['subtree', `${n.subtree.nodes} nodes · `
      + `${n.subtree.blocks} blk · ${n.subtree.tokens} tok · ${n.subtree.locked} locked`
      + (n.subtree.offloaded_blocks ? ` · ${n.subtree.offloaded_blocks} blk offloaded` : '')]);
    const table = document.createElement('table');
    for (const [k, v] of rows) {
      const tr = table.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = String(v);
    }
    box.replaceChildren(table);
    if (!n.root) {
      const text = document.createElement('div');
      text.className = 'text';
      text.textContent = n.text;
      box.append(text);
    }
    const toggle = document.createElement('button');
    toggle.textContent = view.collapsed.has(n.id) ? 'expand subtree' : 'collapse subtree';
    toggle.onclick = () => { toggleCollapse(n.id); };
    box.append(toggle);
    if (n.more) {
      const more = document.createElement('button');
      more.textContent = `show ${n.more.children} hidden children`;
      more.onclick = () => { view.expand.add(n.id); fetchTree(); };
      box.append(' ', more);
    }
  }

  // The start and the end of an edge: siblings often differ only at the end.
  function short(text) {
    const s = oneLine(text);
    return s.length > LABEL_CHARS ? s.slice(0, 10) + '…' + s.slice(-(LABEL_CHARS - 11)) : s;
  }

  function oneLine(text) {
    return String(text || '').replace(/\n/g, '⏎').replace(/\s/g, ' ');
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;',
      '"': '&quot;', "'": '&#39;' }[c]));
  }

  function setStatus(text, cls) {
    const s = $('status');
    s.textContent = text;
    s.className = 'status ' + (cls || '');
  }

  function toggleCollapse(id) {
    if (view.collapsed.has(id)) view.collapsed.delete(id);
    else view.collapsed.add(id);
    requestRender();
  }

  // ---- wiring ----

  function connect() {
    const es = new EventSource('/cache/events');
    es.addEventListener('hello', () => {
      view.streamLive = true;
      setStatus('live', 'live');
      fetchTree();
    });
    es.addEventListener('diff', (m) => onDiff(JSON.parse(m.data)));
    es.addEventListener('cache', (m) => onEvents(JSON.parse(m.data)));
    es.addEventListener('dropped', (m) => {
      view.stats.droppedFrames += JSON.parse(m.data).frames;
      refetchSoon(0);
    });
    es.onerror = () => {
      view.streamLive = false;
      if (!view.paused) setStatus('reconnecting…', 'bad');
    };
  }

  function init() {
    const svg = $('tree');
    $('tree-wrap').addEventListener('scroll', requestPaint, { passive: true });
    window.addEventListener('resize', requestPaint);
    svg.addEventListener('click', (e) => {
      const g = e.target.closest('g.node');
      if (!g) return;
      if (g.dataset.more) {
        view.expand.add(Number(g.dataset.more));
        fetchTree();
        return;
      }
      view.selected = Number(g.dataset.id);
      requestRender();
    });
    svg.addEventListener('dblclick', (e) => {
      const g = e.target.closest('g.node');
      if (g && g.dataset.id) toggleCollapse(Number(g.dataset.id));
    });
    let searchTimer = null;
    $('search').addEventListener('input', () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => {
        view.search = $('search').value.trim();
        fetchTree();
      }, 300);
    });
    const highlight = () => {
      view.request = $('request').value.trim();
      fetchTree();
    };
    $('highlight').onclick = highlight;
    $('request').addEventListener('keydown', (e) => { if (e.key === 'Enter') highlight(); });
    $('clear-highlight').onclick = () => {
      $('request').value = '';
      view.request = '';
      fetchTree();
    };
    $('events').addEventListener('click', (e) => {
      const li = e.target.closest('li');
      if (li && li.dataset.request) {
        $('request').value = li.dataset.request;
        highlight();
      } else if (li && view.nodes.has(Number(li.dataset.node))) {
        view.selected = Number(li.dataset.node);
        requestRender();
      }
    });
    $('budget').onchange = () => {
      view.budget = Number($('budget').value);
      view.expand.clear();
      fetchTree();
    };
    $('collapse-all').onclick = () => {
      for (const n of view.nodes.values()) if (!n.root && n.children > 0) view.collapsed.add(n.id);
      requestRender();
    };
    $('expand-all').onclick = () => {
      view.collapsed.clear();
      requestRender();
    };
    $('pause').onclick = () => {
      view.paused = !view.paused;
      $('pause').textContent = view.paused ? 'resume' : 'pause';
      if (view.paused) setStatus('paused', 'paused');
      else {
        setStatus('live', 'live');
        fetchTree();
      }
    };
    const params = new URLSearchParams(location.search);
    if (params.get('request')) {
      $('request').value = params.get('request');
      view.request = params.get('request');
    }
    connect();
  }

  init();
})();
