// timeline.js: the token timeline as a chart (seed 004 §6), drawn by hand
// in SVG from GET …/token-timeline: the context's size along the
// conversation (a line, against the model's window), each model call's
// tokens (a bar and a point), each compaction's drop (marked), and the
// cost accumulated (a second line, on its own scale). Hovering a point
// says what it is; the table under the chart says the same for each call.
'use strict';

(() => {
  const { el, svg, api, fmtCost } = window.agentree;
  const W = 900;
  const H = 280;
  const PAD = { l: 56, r: 64, t: 16, b: 28 };

  const num = (v) => Number(v || 0);
  const fmtTokens = (n) => (n >= 10000 ? Math.round(n / 1000) + 'k' : String(Math.round(n)));

  function chart(points, limit) {
    const n = points.length;
    const calls = points.filter((p) => p.modelCall);
    const maxTokens = Math.max(1, ...points.map((p) => num(p.contextTokens)), ...calls.map((p) => num(p.callInputTokens) + num(p.callOutputTokens)));
    // The window as the top when the context comes near it, else the
    // largest figure: a 300-token run on a 200k model is not a flat line.
    const top = limit && limit < maxTokens * 1.5 ? Math.max(limit, maxTokens) : maxTokens * 1.1;
    const maxCost = Math.max(0, ...points.map((p) => num(p.costTotal)));
    const x = (i) => PAD.l + (n > 1 ? (i * (W - PAD.l - PAD.r)) / (n - 1) : (W - PAD.l - PAD.r) / 2);
    const y = (t) => H - PAD.b - (t / top) * (H - PAD.t - PAD.b);
    const yc = (c) => H - PAD.b - (maxCost ? (c / maxCost) * (H - PAD.t - PAD.b) : 0);
    const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'token-chart', role: 'img',
      'aria-label': `Context size over ${n} entries, ${calls.length} model calls` });

    // Axes and gridlines: tokens on the left, cost on the right.
    for (let k = 0; k <= 4; k++) {
      const t = (top * k) / 4;
      s.append(svg('line', { x1: PAD.l, x2: W - PAD.r, y1: y(t), y2: y(t), class: 'grid' }));
      s.append(svg('text', { x: PAD.l - 6, y: y(t) + 4, class: 'axis', 'text-anchor': 'end' }, fmtTokens(t)));
      if (maxCost) s.append(svg('text', { x: W - PAD.r + 6, y: yc((maxCost * k) / 4) + 4, class: 'axis cost' }, '$' + ((maxCost * k) / 4).toFixed(4)));
    }
    s.append(svg('text', { x: PAD.l, y: H - 8, class: 'axis' }, 'entries along the conversation →'));
    if (limit && limit <= top) {
      s.append(svg('line', { x1: PAD.l, x2: W - PAD.r, y1: y(limit), y2: y(limit), class: 'limit' }));
      s.append(svg('text', { x: W - PAD.r - 4, y: y(limit) - 4, class: 'axis', 'text-anchor': 'end' }, 'window ' + limit + ' tokens'));
    }

    // Each call's tokens: a bar (what it read, then what it wrote).
    points.forEach((p, i) => {
      if (!p.modelCall) return;
      const inT = num(p.callInputTokens);
      const outT = num(p.callOutputTokens);
      s.append(svg('rect', { x: x(i) - 3, width: 6, y: y(inT), height: y(0) - y(inT), class: 'bar in' }));
      s.append(svg('rect', { x: x(i) - 3, width: 6, y: y(inT + outT), height: y(inT) - y(inT + outT), class: 'bar out' }));
    });
    // The context's size: a line through every entry.
    s.append(svg('polyline', { points: points.map((p, i) => x(i) + ',' + y(num(p.contextTokens))).join(' '), class: 'context' }));
    if (maxCost) s.append(svg('polyline', { points: points.map((p, i) => x(i) + ',' + yc(num(p.costTotal))).join(' '), class: 'cost-line' }));

    const readout = svg('text', { x: PAD.l + 6, y: PAD.t + 12, class: 'readout' }, '');
    const say = (msg) => () => { readout.textContent = msg; };
    points.forEach((p, i) => {
      const ctxT = num(p.contextTokens);
      if (p.compaction) {
        const before = i > 0 ? num(points[i - 1].contextTokens) : ctxT;
        const msg = `compaction: context ${before} → ${ctxT} tokens (−${Math.max(0, before - ctxT)})`;
        const g = svg('g', { class: 'compaction-mark', 'data-entry': p.entryId, tabindex: '0' });
        g.append(svg('line', { x1: x(i), x2: x(i), y1: PAD.t, y2: y(0), class: 'drop' }),
          svg('path', { d: `M${x(i) - 7} ${y(before) - 2}L${x(i) + 7} ${y(before) - 2}L${x(i)} ${y(before) + 10}Z`, class: 'drop-arrow' }),
          svg('title', null, msg));
        g.addEventListener('mouseenter', say(msg));
        g.addEventListener('focus', say(msg));
        s.append(g);
      }
      if (p.modelCall) {
        const k = calls.indexOf(p) + 1;
        const msg = `call ${k}: read ${num(p.callInputTokens)}, wrote ${num(p.callOutputTokens)} tokens · ${fmtCost(p.cost)} · ${fmtCost(p.costTotal)} so far · context ${ctxT} tokens`;
        const c = svg('circle', { cx: x(i), cy: y(ctxT), r: 5, class: 'call-point' + (p.estimated ? ' estimated' : ''), 'data-entry': p.entryId, tabindex: '0' });
        c.append(svg('title', null, msg));
        c.addEventListener('mouseenter', say(msg));
        c.addEventListener('focus', say(msg));
        s.append(c);
      }
    });
    s.append(readout);
    return s;
  }

  function table(points) {
    const calls = points.filter((p) => p.modelCall);
    return el('details', { class: 'calls-table' }, el('summary', { text: 'Per model call' }),
      el('div', { class: 'table-wrap' }, el('table', { 'aria-label': 'Model calls' },
        el('thead', null, el('tr', null, ['#', 'Entry', 'Read', 'Wrote', 'Cost', 'So far', 'Context'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', null, calls.map((p, k) => el('tr', { 'data-entry': p.entryId },
          el('td', { text: String(k + 1) }), el('td', { text: (p.role || p.type) + ' ' + p.entryId.slice(0, 8) }),
          el('td', { text: String(num(p.callInputTokens)) }), el('td', { text: String(num(p.callOutputTokens)) }),
          el('td', { text: fmtCost(p.cost) }), el('td', { text: fmtCost(p.costTotal) }), el('td', { text: String(num(p.contextTokens)) })))))));
  }

  async function panel(view) {
    const first = await api('GET', view.base + '/token-timeline?pageSize=500');
    const points = first.points || [];
    for (let cur = first.nextCursor; cur;) {
      const p = await api('GET', view.base + '/token-timeline?pageSize=500&cursor=' + encodeURIComponent(cur));
      points.push(...(p.points || []));
      cur = p.nextCursor;
    }
    if (!points.length) return el('p', { class: 'muted', text: 'No entries yet.' });
    const calls = points.filter((p) => p.modelCall);
    const drops = points.filter((p) => p.compaction).length;
    const last = points[points.length - 1];
    const limit = num(first.limit);
    return el('div', { class: 'timeline' },
      el('p', { class: 'muted timeline-summary', text: [calls.length + ' model call' + (calls.length === 1 ? '' : 's'),
        drops ? drops + ' compaction' + (drops === 1 ? '' : 's') : '', 'context now ' + num(last.contextTokens) + ' of ' + limit + ' tokens',
        fmtCost(last.costTotal) + ' spent'].filter(Boolean).join(' · ') }),
      el('p', { class: 'legend' }, el('span', { class: 'key context', text: 'context size' }), el('span', { class: 'key bar', text: 'tokens per call' }),
        el('span', { class: 'key cost', text: 'cost so far' }), el('span', { class: 'key drop', text: 'compaction' })),
      chart(points, limit), table(points));
  }

  window.agentree.panels.push({ name: 'Token timeline', className: 'timeline-panel', wide: true, load: panel });
})();
