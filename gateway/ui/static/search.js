// Cross-run search (seed 004 §9): executions found by tool, arguments,
// model, status, error class, definition, time and cost, a definition's
// statistics, and the failure clusters. Registered with app.js through
// window.agentree.
'use strict';

((ui) => {
  const { el, api, alertBox, showError, badge, fmtCost, fmtTime, STATUSES, main } = ui;

  // The filters, as the search API names them, with their labels.
  const FILTERS = [
    ['toolName', 'Tool called'], ['toolArguments', 'Arguments contain'], ['model', 'Model (provider/modelId)'],
    ['errorClass', 'Error class'], ['stopReason', 'Stop reason'], ['agentDefinitionId', 'Definition ID'],
    ['from', 'Created from (RFC 3339)'], ['to', 'Created before'], ['minCost', 'Min cost (USD)'], ['maxCost', 'Max cost (USD)'],
  ];

  function viewSearch(_, query) {
    document.title = 'Search · Agentree';
    const err = alertBox();
    err.id = 'search-error';
    const inputs = {};
    const fields = FILTERS.map(([name, label]) => {
      inputs[name] = el('input', { id: 'search-' + name, name, value: query.get(name) || '' });
      return el('div', null, el('label', { for: 'search-' + name, text: label }), inputs[name]);
    });
    const status = el('select', { id: 'search-status', name: 'status' },
      el('option', { value: '', text: 'Any status' }), STATUSES.map((s) => el('option', { value: s, text: s })));
    status.value = query.get('status') || '';
    const form = el('form', {
      class: 'card', role: 'search', id: 'search-form',
      onsubmit: (ev) => {
        ev.preventDefault();
        const q = new URLSearchParams();
        for (const [name] of FILTERS) if (inputs[name].value.trim()) q.set(name, inputs[name].value.trim());
        if (status.value) q.set('status', status.value);
        location.hash = '#/search' + (q.toString() ? '?' + q : '');
      },
    }, el('div', { class: 'row wrap' }, fields, el('div', null, el('label', { for: 'search-status', text: 'Status' }), status)),
    el('p', null, el('button', { type: 'submit', id: 'search-go', text: 'Search' })));

    const body = el('tbody', { id: 'search-results' });
    const more = el('button', { type: 'button', class: 'secondary', id: 'search-more', text: 'Load more', hidden: true });
    const stats = el('div', { id: 'definition-stats' });
    const clusters = el('tbody', { id: 'failure-clusters' });
    main.append(el('h1', { text: 'Search executions' }), form, err,
      el('div', { class: 'card table-wrap' }, el('table', { 'aria-label': 'Matching executions' },
        el('thead', null, el('tr', null, ['Status', 'First prompt', 'Turns', 'Tool calls', 'Tools', 'Cost', 'Error class', 'Created']
          .map((h) => el('th', { scope: 'col', text: h })))), body)), more,
      stats,
      el('h2', { text: 'Failure clusters' }),
      el('div', { class: 'card table-wrap' }, el('table', { 'aria-label': 'Failure clusters' },
        el('thead', null, el('tr', null, ['Failures', 'Error class', 'Last tool call', 'Examples']
          .map((h) => el('th', { scope: 'col', text: h })))), clusters)));

    const params = new URLSearchParams(query);
    params.set('pageSize', '25');
    let cursor = '';
    async function load() {
      const q = new URLSearchParams(params);
      if (cursor) q.set('cursor', cursor);
      const page = await api('GET', '/agent-executions:search?' + q);
      for (const m of page.matches || []) {
        const x = m.execution;
        const s = m.summary || {};
        const prompt = (x.input && x.input.userPrompt) || x.summary || x.id;
        body.append(el('tr', { 'data-id': x.id },
          el('td', null, badge(x.status)),
          el('td', { class: 'prompt' }, el('a', { href: '#/executions/' + x.id, text: prompt })),
          el('td', { text: String(s.turns || 0) }), el('td', { text: String(s.toolCalls || 0) }),
          el('td', { text: (s.tools || []).join(', ') }), el('td', { text: fmtCost(s.cost) }),
          el('td', { text: s.errorClass || '' }), el('td', { text: fmtTime(x.createdAt) })));
      }
      if (!body.children.length) body.append(el('tr', { id: 'search-empty' }, el('td', { colspan: '8', class: 'muted', text: 'No execution matches.' })));
      cursor = page.nextCursor || '';
      more.hidden = !cursor;
    }
    more.addEventListener('click', () => load().catch((e) => showError(err, e)));
    load().catch((e) => showError(err, e));

    const def = query.get('agentDefinitionId');
    if (def) {
      api('GET', '/agent-definitions/' + encodeURIComponent(def) + '/stats').then((st) => {
        const row = (name, d, fmt) => el('tr', null, el('th', { scope: 'row', text: name }),
          ['count', 'p50', 'p90', 'p99', 'max'].map((k) => el('td', { text: k === 'count' ? String(d[k] || 0) : fmt(d[k] || 0) })));
        const num = (v) => String(Math.round(v * 100) / 100);
        stats.replaceChildren(el('h2', { text: 'Definition statistics' }),
          el('p', { class: 'muted', text: (st.executions || 0) + ' executions · ' +
            Object.entries(st.byStatus || {}).map(([k, v]) => k + ' ' + v).join(', ') }),
          el('div', { class: 'card table-wrap' }, el('table', { 'aria-label': 'Definition statistics' },
            el('thead', null, el('tr', null, ['', 'Count', 'p50', 'p90', 'p99', 'Max'].map((h) => el('th', { scope: 'col', text: h })))),
            el('tbody', null, row('Turns', st.turns || {}, num), row('Tool calls', st.toolCalls || {}, num),
              row('Cost', st.cost || {}, fmtCost), row('Duration (ms)', st.durationMs || {}, num)))));
      }).catch((e) => showError(err, e));
    }

    const cq = new URLSearchParams({ pageSize: '20' });
    for (const k of ['agentDefinitionId', 'from', 'to']) if (query.get(k)) cq.set(k, query.get(k));
    api('GET', '/failure-clusters?' + cq).then((page) => {
      for (const c of page.failureClusters || []) {
        const q = new URLSearchParams({ status: 'FAILED' });
        if (c.errorClass) q.set('errorClass', c.errorClass);
        clusters.append(el('tr', null, el('td', { text: String(c.count) }),
          el('td', null, el('a', { href: '#/search?' + q, text: c.errorClass || '(none)' })),
          el('td', { text: c.lastToolName ? c.lastToolName + ' → ' + c.lastToolStatus : 'no tool call' }),
          el('td', null, (c.exampleExecutionIds || []).map((id) => el('a', { href: '#/executions/' + id, text: id.slice(0, 8) + ' ' })))));
      }
      if (!clusters.children.length) clusters.append(el('tr', null, el('td', { colspan: '4', class: 'muted', text: 'No failures.' })));
    }).catch((e) => showError(err, e));
  }

  ui.route(/^#\/search$/, viewSearch);
})(window.agentree);
