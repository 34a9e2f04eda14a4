// The debugger's run analysis in the execution view (issue 41): the
// decision points with their filters, the compression analysis of each
// compaction, and the explanation of the run. Each is a side panel that
// app.js adds to an execution's page (window.agentree.panels); every
// text goes in through textContent, never as HTML.
'use strict';

function panelsOf({ el, api, pages, base, fmtCost }) {
  // The filters outlive the panel's refreshes (one set per page).
  const kind = el('select', { id: 'dp-kind', 'aria-label': 'Kind' },
    ['', 'tool_call', 'approval', 'spawn', 'stop'].map((k) => el('option', { value: k, text: k || 'every kind' })));
  const tool = el('input', { id: 'dp-tool', type: 'text', placeholder: 'tool name', 'aria-label': 'Tool name' });
  const list = el('ol', { id: 'decision-points', class: 'decisions' });
  const decisionsPanel = el('div', null, el('p', { class: 'row' }, kind, ' ', tool), list);
  let loads = 0;
  return [

  ['Decision points', async () => {
    const load = async () => {
      // Loads overlap (a filter changed while a refresh runs): only the
      // latest one's answer is shown.
      const mine = ++loads;
      const q = new URLSearchParams();
      if (kind.value) q.set('kind', kind.value);
      if (tool.value.trim()) q.set('toolName', tool.value.trim());
      try {
        const dps = await pages(base + '/decision-points' + (q.toString() ? '?' + q : ''), 'decisionPoints');
        if (mine !== loads) return;
        list.replaceChildren(...(dps.length ? dps.map(decision) : [el('li', { class: 'muted', text: 'None.' })]));
      } catch (e) { if (mine === loads) list.replaceChildren(el('li', { class: 'error', text: e.message })); }
    };
    const decision = (d) => {
      const o = d.outcome || {};
      const head = ['step ' + (d.step || 0), d.kind, d.toolName, d.kind === 'stop' ? d.stopReason : o.status].filter(Boolean).join(' · ');
      const li = el('li', { class: 'dp dp-' + d.kind, 'data-kind': d.kind },
        el('strong', { text: head }),
        d.arguments ? el('code', { class: 'args', text: JSON.stringify(d.arguments) }) : null,
        d.reasoning ? el('p', { class: 'reasoning', text: (d.reasoningSource === 'thinking' ? 'Thinking: ' : 'Wrote: ') + d.reasoning }) : null,
        o.excerpt ? el('p', { class: 'muted outcome', text: '→ ' + o.excerpt }) : null,
        o.approval && o.approval.decision ? el('p', { class: 'muted', text: o.approval.decision + ' by ' + (o.approval.decidedBy || '?') + (o.approval.reason ? ': ' + o.approval.reason : '') }) : null,
        (d.childExecutionIds || []).map((c) => el('a', { href: '#/executions/' + c, text: 'sub-agent ' + c.slice(0, 8) })),
        el('p', { class: 'muted', text: 'context: ' + (d.context ? d.context.tokens + ' tokens at entry ' + d.context.entryId.slice(0, 8) : '?') }));
      return li;
    };
    kind.onchange = load;
    tool.onchange = load;
    await load();
    return decisionsPanel;
  }],

  ['Compressions', async () => {
    const entries = await pages(base + '/entries', 'entries');
    const comps = entries.filter((e) => e.type === 'compaction' && e.content && e.content.summary);
    if (!comps.length) return el('p', { class: 'muted', text: 'No compaction yet.' });
    const out = el('div', { id: 'compressions' });
    for (const c of comps) {
      const a = await api('GET', base + '/compactions/' + c.id + '/analysis');
      const rows = (a.entries || []).map((x) => el('tr', { class: x.possiblyLost ? 'lost' : null },
        el('td', { text: x.role }), el('td', { text: String(x.tokens || 0) }),
        el('td', { text: (x.keptTerms || []).join(', ') }), el('td', { text: (x.missingTerms || []).join(', ') }),
        el('td', { text: x.possiblyLost ? 'possibly lost' : '' })));
      out.append(el('section', { class: 'compression', 'data-entry': c.id },
        el('h4', { text: a.trigger + ' compaction · ' + (a.contextBefore.tokens || 0) + ' → ' + (a.contextAfter.tokens || 0) + ' tokens (saved ' + (a.tokensSaved || 0) + ')' }),
        el('p', { class: 'muted', text: (a.possiblyLost || 0) + ' of ' + rows.length + ' entries possibly lost' }),
        el('table', { 'aria-label': 'Summarised entries' },
          el('thead', null, el('tr', null, ['Role', 'Tokens', 'Kept', 'Missing', ''].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', null, rows)),
        el('details', null, el('summary', { text: 'Summary' }), el('pre', { class: 'summary', text: a.summary || '' }))));
    }
    return out;
  }],

  ['Explanation', async () => {
    const box = el('div', { id: 'explanation' });
    const button = el('button', { type: 'button', id: 'explain', text: 'Explain this run' });
    const note = el('p', { class: 'muted', id: 'explanation-meta' });
    const text = el('pre', { class: 'explanation-text', id: 'explanation-text' });
    let timer = null;
    const show = (x) => {
      text.textContent = x.status === 'failed' ? 'Failed: ' + (x.errorMessage || '') : (x.text || '');
      const u = x.usage || {};
      note.textContent = [x.status, x.current ? 'current' : 'an earlier leaf', (x.decisionPoints || 0) + ' decision points',
        x.truncated ? 'replay truncated' : '', x.usage ? (u.inputTokens || 0) + ' in / ' + (u.outputTokens || 0) + ' out · ' + fmtCost(u.cost) : '']
        .filter(Boolean).join(' · ');
      clearTimeout(timer);
      if (x.status === 'pending') {
        timer = setTimeout(async () => {
          if (!box.isConnected) return;
          try { show(await api('GET', base + '/explanation?leafEntryId=' + encodeURIComponent(x.leafEntryId))); } catch (e) { note.textContent = e.message; }
        }, 500);
      }
    };
    button.addEventListener('click', async () => {
      button.disabled = true;
      try { show(await api('POST', base + '/explain', {})); } catch (e) { note.textContent = e.message; }
      button.disabled = false;
    });
    try { show(await api('GET', base + '/explanation')); } catch (e) { if (e.status !== 404) note.textContent = e.message; }
    box.append(button, note, text);
    return box;
  }],
];
}

// One set of panels per execution page (view), so the filters outlive the
// panels' refreshes.
(() => {
  const ui = window.agentree;
  const sets = new WeakMap();
  const setOf = (view) => {
    if (!sets.has(view)) sets.set(view, panelsOf({ ...ui, base: view.base }));
    return sets.get(view);
  };
  ['Decision points', 'Compressions', 'Explanation'].forEach((name, i) => ui.panels.push({ name, load: (view) => setOf(view)[i][1]() }));
})();
