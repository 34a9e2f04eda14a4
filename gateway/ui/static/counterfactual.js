// Counterfactuals (seed 004 §3): a "What if…" panel on an execution runs
// an alternative from one of its entries (another user message, another
// model, or another tool call), and a page shows the two paths side by
// side, with the branch's calls waiting for approval. Registered with
// app.js through window.agentree.
'use strict';

((ui) => {
  const { el, api, pages, alertBox, showError, badge, fmtCost, main } = ui;
  const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'PAUSED']);

  const blocks = (e) => (e.content && e.content.content) || [];
  const textOf = (e) => blocks(e).filter((b) => b.type === 'text').map((b) => b.text).join(' ');
  const callsOf = (e) => blocks(e).filter((b) => b.type === 'tool_call' && b.toolCall).map((b) => b.toolCall);

  // whatIf is the panel's form: the entry, the change, and its value. The
  // panels refresh with the transcript; the form is built once per
  // execution so what a person typed stays.
  const forms = new Map();
  async function whatIf(id, base) {
    if (!forms.has(id)) forms.set(id, buildWhatIf(id, base));
    return forms.get(id);
  }

  async function buildWhatIf(id, base) {
    const entries = (await pages(base + '/entries', 'entries'))
      .filter((e) => e.type === 'message' && (e.role === 'user' || e.role === 'assistant'));
    if (!entries.length) return el('p', { class: 'muted', text: 'No entries yet.' });
    const err = alertBox();
    err.id = 'cf-error';
    const label = (e) => {
      const calls = callsOf(e);
      const what = calls.length ? 'calls ' + calls.map((c) => c.name).join(', ') : textOf(e).slice(0, 50);
      return e.role + ': ' + what;
    };
    const entry = el('select', { id: 'cf-entry', name: 'entryId' }, entries.map((e) => el('option', { value: e.id, text: label(e) })));
    const change = el('select', { id: 'cf-change', name: 'change' },
      el('option', { value: 'message', text: 'a different user message' }),
      el('option', { value: 'model', text: 'a different model' }),
      el('option', { value: 'action', text: 'a different tool call' }));
    const message = el('textarea', { id: 'cf-message', name: 'userMessage' });
    const model = el('input', { id: 'cf-model', name: 'model', placeholder: 'provider/modelId' });
    const tool = el('input', { id: 'cf-tool', name: 'toolName', placeholder: 'the same tool' });
    const args = el('textarea', { id: 'cf-arguments', name: 'arguments', placeholder: '{"text": "…"}' });
    const groups = {
      message: el('div', null, el('label', { for: 'cf-message', text: 'User message instead' }), message),
      model: el('div', null, el('label', { for: 'cf-model', text: 'Model instead' }), model),
      action: el('div', null, el('label', { for: 'cf-tool', text: 'Tool instead' }), tool,
        el('label', { for: 'cf-arguments', text: 'Arguments (JSON)' }), args),
    };
    const show = () => {
      for (const [k, g] of Object.entries(groups)) g.hidden = k !== change.value;
      const e = entries.find((x) => x.id === entry.value);
      const call = e && callsOf(e)[0];
      if (change.value === 'action' && call && !args.value) args.value = JSON.stringify(call.arguments || {});
    };
    const pick = () => {
      const e = entries.find((x) => x.id === entry.value);
      change.value = e.role === 'user' ? 'message' : callsOf(e).length ? 'action' : 'model';
      args.value = '';
      show();
    };
    entry.addEventListener('change', pick);
    change.addEventListener('change', show);
    pick();
    const submit = el('button', { type: 'submit', id: 'cf-run', text: 'Run the alternative' });
    return el('form', {
      id: 'cf-form',
      onsubmit: async (ev) => {
        ev.preventDefault();
        err.hidden = true;
        const req = { entryId: entry.value };
        try {
          if (change.value === 'message') req.userMessage = message.value;
          if (change.value === 'model') {
            const [provider, ...rest] = model.value.trim().split('/');
            req.model = { provider, modelId: rest.join('/') };
          }
          if (change.value === 'action') {
            req.action = { arguments: args.value.trim() ? JSON.parse(args.value) : {} };
            if (tool.value.trim()) req.action.toolName = tool.value.trim();
          }
        } catch (e) { showError(err, new Error('Arguments are not JSON: ' + e.message)); return; }
        submit.disabled = true;
        try {
          const cf = await api('POST', base + '/counterfactuals', req);
          location.hash = '#/executions/' + id + '/counterfactuals/' + cf.id;
        } catch (e) { showError(err, e); } finally { submit.disabled = false; }
      },
    }, el('label', { for: 'cf-entry', text: 'From the entry' }), entry,
    el('label', { for: 'cf-change', text: 'What if it had been' }), change,
    groups.message, groups.model, groups.action, el('p', null, submit), err);
  }

  // side renders one path of the comparison.
  function side(title, p, cfBase) {
    const decisions = (p.decisions || []).map((d) => {
      const li = el('li', { class: 'decision ' + (d.status || 'none'), 'data-call': d.toolCallId },
        el('strong', { text: d.toolName }), el('code', { text: '(' + JSON.stringify(d.arguments || {}) + ')' }), ' ',
        el('span', { class: 'muted decision-status', text: d.status || 'not run' }),
        d.replayed ? el('span', { class: 'badge replayed', text: 'from the record' }) : null,
        d.outputPreview ? el('pre', { class: 'result', text: d.outputPreview }) : null);
      if (cfBase && d.status === 'awaiting_approval') {
        for (const decision of ['approve', 'reject']) {
          li.append(el('button', {
            type: 'button', class: decision === 'approve' ? 'cf-approve' : 'secondary cf-reject', text: decision === 'approve' ? 'Approve' : 'Reject',
            onclick: (ev) => {
              ev.target.disabled = true;
              api('POST', cfBase + '/tool-calls/' + encodeURIComponent(d.toolCallId) + '/approval', { decision }).catch((e) => li.append(el('p', { class: 'error', text: e.message })));
            },
          }));
        }
      }
      return li;
    });
    return el('section', { class: 'card cf-side', 'aria-label': title },
      el('h2', { text: title }),
      el('p', null, badge(p.status), ' ', el('a', { href: '#/executions/' + p.executionId, text: p.executionId.slice(0, 8) })),
      el('p', { class: 'muted cf-numbers', text: 'steps ' + (p.steps || 0) + ' · tokens ' + (Number(p.inputTokens || 0) + Number(p.outputTokens || 0)) + ' · ' + fmtCost(p.cost) }),
      el('h3', { text: 'Decisions' }), decisions.length ? el('ol', { class: 'cf-decisions' }, decisions) : el('p', { class: 'muted', text: 'No tool calls.' }),
      el('h3', { text: 'Answers' }), el('div', { class: 'cf-answers' }, (p.answers || []).map((a) => el('p', { class: 'msg assistant', text: a }))));
  }

  function viewCounterfactual(m) {
    const [, id, cfId] = m;
    document.title = 'Counterfactual · Agentree';
    const err = alertBox();
    const grid = el('div', { class: 'cf-grid', id: 'cf-compare' });
    const caption = el('p', { class: 'muted', id: 'cf-caption' });
    main.append(el('h1', { text: 'What if…' }), el('p', null, el('a', { href: '#/executions/' + id, text: 'Back to the original' })), caption, err, grid);
    let timer = null;
    let shown = '';
    async function load() {
      const cf = await api('GET', '/agent-executions/' + id + '/counterfactuals/' + cfId);
      const key = JSON.stringify(cf);
      if (key !== shown) {
        shown = key;
        caption.textContent = 'A different ' + ({ message: 'user message', model: 'model', action: 'tool call' }[cf.change] || 'choice') +
          ' at entry ' + (cf.entryId || '').slice(0, 8) + '. Calls the original made are answered from its record; new ones that change something wait for approval.';
        grid.replaceChildren(side('Original', cf.original, ''), side('Counterfactual', cf.counterfactual, '/agent-executions/' + cf.id));
      }
      if (TERMINAL.has(cf.counterfactual.status) && TERMINAL.has(cf.original.status)) clearInterval(timer);
    }
    load().catch((e) => showError(err, e));
    timer = setInterval(() => load().catch(() => {}), 1500);
    ui.onLeave(() => clearInterval(timer));
  }

  ui.panels.push({ name: 'What if…', load: (view) => whatIf(view.id, view.base) });
  ui.route(/^#\/executions\/([\w-]+)\/counterfactuals\/([\w-]+)$/, viewCounterfactual);
})(window.agentree);
