// tree.js: the conversation tree drawn as a tree (seed 004 §4) — one row
// per entry, branches in lanes of their own (an entry with siblings, and
// each fork of the execution from the entry it forks at), the active path
// (the leaf's ancestors) in bold — and time travel (§7): a click on an
// entry shows the request the model was sent there (GET …/entries/{id}/
// context), its size in tokens and, at a model call, the call's tokens and
// cost.
'use strict';

(() => {
  const { el, svg, api, pages, fmtCost } = window.agentree;
  const ROW = 26; // px a row; the CSS gives .tree-rows li the same height
  const LANE = 16; // px a lane

  // Per page of an execution: the entry selected, so a refresh keeps it.
  const selected = new Map();
  // An entry's context never changes (entries are immutable): read once.
  const contexts = new Map();


  const textOf = (content) => {
    const c = content && content.content;
    if (!Array.isArray(c)) return '';
    return c.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_call' && b.toolCall ? '→ ' + b.toolCall.name + '()' : '')).filter(Boolean).join(' ');
  };

  function label(e) {
    let t = e.type === 'message' ? e.role : e.type;
    const tx = textOf(e.content);
    if (tx) t += ': ' + tx.replace(/\s+/g, ' ').slice(0, 90);
    return t;
  }

  function callLabel(c) {
    const m = c.metadata || {};
    const u = m.usage || {};
    const model = m.model ? (m.model.provider + '/' + m.model.modelId) : '';
    return 'llm_call: ' + [model, (u.input || 0) + ' in / ' + (u.output || 0) + ' out',
      fmtCost(m.cost ? m.cost.total : 0), (m.latencyMs || 0) + ' ms', m.stopReason || ''].filter(Boolean).join(' · ');
  }

  // load reads the execution's entries and its forks' (each fork's own
  // entries hang off the entry it forks at).
  async function load(view) {
    const own = await pages(view.base + '/entries', 'entries');
    const all = own.map((e) => ({ e, exec: view.id }));
    let forks = [];
    try { forks = await pages(view.base + '/forks', 'agentExecutions'); } catch { /* the tree without them */ }
    for (const f of forks) {
      const es = await pages('/agent-executions/' + f.id + '/entries', 'entries');
      for (const e of es) all.push({ e, exec: f.id, fork: f });
    }
    return { all, forks };
  }

  // layout orders the entries depth first (the active child first, so the
  // active path reads straight down lane 0) and gives each branch a lane.
  function layout(all, leaf) {
    const byId = new Map(all.map((n) => [n.e.id, n]));
    const parents = new Set(all.map((n) => n.e.parentId));
    const kids = new Map();
    const calls = new Map(); // an answer's llm_call entry: its record, not a branch
    for (const n of all) {
      const p = byId.has(n.e.parentId) ? n.e.parentId : '';
      const into = n.e.type === 'llm_call' && !parents.has(n.e.id) && p ? calls : kids;
      if (!into.has(p)) into.set(p, []);
      into.get(p).push(n);
    }
    const active = new Set();
    for (let n = byId.get(leaf); n; n = byId.get(n.e.parentId)) active.add(n.e.id);
    const rows = [];
    let lanes = 1;
    const stack = (kids.get('') || []).slice().reverse().map((n, i, a) => ({ n, parent: null, lane: i === a.length - 1 ? 0 : lanes++ }));
    while (stack.length) {
      const { n, parent, lane } = stack.pop();
      const row = { n, parent, lane, index: rows.length, calls: calls.get(n.e.id) || [], active: active.has(n.e.id) };
      rows.push(row);
      const cs = (kids.get(n.e.id) || []).slice().sort((a, b) => (active.has(b.e.id) - active.has(a.e.id)) || (a.e.seq - b.e.seq));
      row.branches = cs.length;
      // Pushed in reverse: the first child is visited next, in this lane.
      const next = cs.map((c, i) => ({ n: c, parent: row, lane: i === 0 ? lane : lanes++ }));
      for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
    }
    return { rows, lanes };
  }

  function draw(rows, lanes) {
    const w = lanes * LANE;
    const s = svg('svg', { width: w, height: rows.length * ROW, viewBox: '0 0 ' + w + ' ' + rows.length * ROW, 'aria-hidden': 'true', class: 'tree-lines' });
    const x = (r) => r.lane * LANE + LANE / 2;
    const y = (r) => r.index * ROW + ROW / 2;
    for (const r of rows) {
      if (!r.parent) continue;
      const p = r.parent;
      const d = p.lane === r.lane ? `M${x(p)} ${y(p)}V${y(r)}` : `M${x(p)} ${y(p)}Q${x(r)} ${y(p)} ${x(r)} ${y(p) + ROW}V${y(r)}`;
      s.append(svg('path', { d, class: 'edge' + (r.active && p.active ? ' active' : '') }));
    }
    for (const r of rows) {
      s.append(svg('circle', { cx: x(r), cy: y(r), r: r.branches > 1 ? 6 : 4.5,
        class: 'dot ' + (r.n.e.role || r.n.e.type) + (r.active ? ' active' : '') + (r.branches > 1 ? ' fork-point' : '') }));
    }
    return s;
  }

  // panel renders the tree and the time travel view of the selected entry.
  async function panel(view) {
    const { all, forks } = await load(view);
    // The page reads the messages as the panel may be opened: read them
    // here when they are not in yet.
    let msgs = view.messages();
    if (!msgs.length) msgs = await pages(view.base + '/messages', 'messages');
    const leaf = msgs.length ? msgs[msgs.length - 1].entryId : '';
    const { rows, lanes } = layout(all, leaf);
    const travel = el('section', { class: 'time-travel', id: 'time-travel', 'aria-live': 'polite', 'aria-label': 'Time travel' },
      el('p', { class: 'muted', text: 'Click an entry to see exactly what the model saw there.' }));
    const buttons = new Map();
    const pick = (r) => {
      for (const b of buttons.values()) b.classList.remove('selected');
      buttons.get(r.n.e.id).classList.add('selected');
      selected.set(view.id, r.n.e.id);
      showContext(travel, r);
    };
    const list = el('ol', { class: 'tree-rows' });
    for (const r of rows) {
      const b = el('button', {
        type: 'button', class: 'tree-node' + (r.active ? ' active' : '') + (r.branches > 1 ? ' fork-point' : '') + (r.n.fork ? ' forked' : ''),
        'data-entry': r.n.e.id, 'data-exec': r.n.exec, title: r.n.e.id, onclick: () => pick(r),
      }, r.n.fork && r.n.fork.forkedFromEntry === r.n.e.parentId ? el('span', { class: 'fork-tag', text: '↳ fork ' + r.n.exec.slice(0, 8) + ' ' }) : null,
      el('span', { class: 'label', text: label(r.n.e) }),
      r.calls.map((c) => el('span', { class: 'call muted', title: c.e.id, text: ' ' + callLabel(c.e) })));
      buttons.set(r.n.e.id, b);
      list.append(el('li', { class: r.active ? 'active' : null }, b));
    }
    const branchPoints = rows.filter((r) => r.branches > 1).length;
    const legend = [all.length + ' entries'];
    if (branchPoints) legend.push(branchPoints + ' branch point' + (branchPoints > 1 ? 's' : '') + ' (' + (lanes - 1) + ' side branch' + (lanes > 2 ? 'es' : '') + ')');
    if (forks.length) legend.push(forks.length + ' fork' + (forks.length > 1 ? 's' : '') + ' drawn from where they fork');
    legend.push('the active path in bold');
    const out = el('div', { class: 'tree' },
      el('p', { class: 'muted', text: legend.join('; ') + '.' }),
      el('div', { class: 'tree-split' },
        el('div', { class: 'tree-scroll' }, el('div', { class: 'tree-graph' }, draw(rows, lanes), list)),
        travel));
    const keep = rows.find((r) => r.n.e.id === selected.get(view.id));
    if (keep) pick(keep);
    return out;
  }

  // showContext fills box with the request at row r's entry.
  async function showContext(box, r) {
    const e = r.n.e;
    const base = '/agent-executions/' + r.n.exec + '/entries/' + encodeURIComponent(e.id) + '/context';
    box.dataset.entry = e.id;
    box.replaceChildren(el('p', { class: 'muted spinner', text: 'Loading the context…' }));
    try {
      let ctx = contexts.get(base);
      if (!ctx) {
        const first = await api('GET', base + '?pageSize=200');
        ctx = Object.assign({}, first, { messages: (first.messages || []).slice() });
        for (let cur = first.nextCursor; cur;) {
          const p = await api('GET', base + '?pageSize=200&cursor=' + encodeURIComponent(cur));
          ctx.messages.push(...(p.messages || []));
          cur = p.nextCursor;
        }
        contexts.set(base, ctx);
      }
      if (box.dataset.entry !== e.id) return; // another entry was picked meanwhile
      box.replaceChildren(...contextView(e, ctx).filter(Boolean));
    } catch (err) {
      if (box.dataset.entry === e.id) box.replaceChildren(el('p', { class: 'error', role: 'alert', text: err.message }));
    }
  }

  function contextView(e, ctx) {
    const model = ctx.model ? ctx.model.provider + '/' + ctx.model.modelId : '';
    const facts = [el('span', { class: 'tt-tokens', text: (ctx.tokens || 0) + ' tokens in context' })];
    if (ctx.sent) {
      facts.push(' · call: ', el('span', { class: 'tt-call', text: (ctx.callInputTokens || 0) + ' in / ' + (ctx.callOutputTokens || 0) + ' out' }),
        ' · ', el('span', { class: 'tt-cost', text: fmtCost(ctx.cost) }));
    }
    const msgs = ctx.messages || [];
    return [
      el('h4', { text: (ctx.sent ? 'Sent to ' : 'A call here would send to ') + model }),
      el('p', { class: 'muted', text: 'At ' + label(e).slice(0, 60) + ' (' + e.id.slice(0, 8) + ')' }),
      el('p', { class: 'tt-facts' }, facts),
      ctx.compactionEntryId ? el('p', { class: 'notice', text: 'Starts with the summary of compaction ' + ctx.compactionEntryId.slice(0, 8) + '.' }) : null,
      ctx.system ? el('details', null, el('summary', { text: 'System prompt' }), el('pre', { text: ctx.system })) : null,
      (ctx.tools || []).length ? el('p', { class: 'muted', text: 'Tools offered: ' + ctx.tools.map((t) => t.name).join(', ') }) : null,
      el('p', { class: 'muted', text: msgs.length + ' message' + (msgs.length === 1 ? '' : 's') + ':' }),
      el('ol', { class: 'tt-messages' }, msgs.map((m) => el('li', { class: 'tt-msg ' + (m.role || '') },
        el('strong', { text: m.role + (m.toolCallId ? ' (' + m.toolCallId + ')' : '') }), ' ',
        (m.content || []).map((b) => {
          if (b.type === 'text') return el('span', { class: 'tt-text', text: b.text });
          if (b.type === 'tool_call' && b.toolCall) return el('code', { text: '→ ' + b.toolCall.name + ' ' + JSON.stringify(b.toolCall.arguments) });
          if (b.type === 'thinking') return el('span', { class: 'muted', text: '(thinking) ' + (b.thinking || '') });
          return el('span', { class: 'muted', text: '[' + b.type + ']' });
        })))),
    ];
  }

  window.agentree.panels.push({ name: 'Conversation tree', className: 'tree-panel', wide: true, load: panel });
})();
