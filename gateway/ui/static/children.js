// children.js: an execution's relatives — its sub-agents (GET …/children)
// as nested executions with their status, steps and cost, each linked; in
// the header, the execution it is a sub-agent, fork or resume of; and a
// Resume button while it is PAUSED (POST …/resume), which opens the new
// execution that continues it, or says why the API refused.
'use strict';

(() => {
  const { el, api, pages, badge, fmtCost, fmtDuration } = window.agentree;
  const MAX_DEPTH = 4; // nested sub-agents shown; deeper ones are a link away

  const link = (id) => el('a', { href: '#/executions/' + id, text: id.slice(0, 8) });

  // header shows the execution's relatives and, while it is PAUSED, the
  // Resume form. It is called on every render — the status passes through
  // others as the page replays the stream — so the form is built once and
  // only shown or hidden: what a person typed, or an error shown, stays.
  const forms = new WeakMap();
  function header(view, box) {
    const ex = view.execution();
    if (!ex) return;
    let form = forms.get(box);
    if (!form) {
      form = resumeForm(view, ex);
      forms.set(box, form);
      const parts = [];
      if (ex.parentId) parts.push(el('span', { class: 'relative muted' }, 'sub-agent of ', link(ex.parentId)));
      if (ex.resumedFrom) parts.push(el('span', { class: 'relative muted' }, 'resumes ', link(ex.resumedFrom)));
      if (ex.forkedFrom) parts.push(el('span', { class: 'relative muted' }, 'fork of ', link(ex.forkedFrom)));
      box.replaceChildren(...parts, form);
    }
    form.hidden = ex.status !== 'PAUSED';
  }

  function resumeForm(view, ex) {
    const err = el('span', { class: 'error resume-error', role: 'alert', hidden: true });
    const message = el('input', { id: 'resume-message', name: 'message', placeholder: 'Message (optional)', 'aria-label': 'Message to continue with' });
    const steps = el('input', { id: 'resume-steps', name: 'maxSteps', type: 'number', min: '0', max: '500', placeholder: 'Steps',
      'aria-label': 'Steps the resumed run may take (empty: as many as this run had)' });
    const button = el('button', { type: 'submit', id: 'resume', text: 'Resume' });
    const why = el('span', { class: 'muted', text: 'Paused' + (ex.stopReason ? ' (' + ex.stopReason + ')' : '') + '.' });
    return el('form', {
      class: 'resume', 'aria-label': 'Resume',
      onsubmit: async (ev) => {
        ev.preventDefault();
        err.hidden = true;
        button.disabled = true;
        const body = {};
        if (message.value.trim()) body.message = message.value.trim();
        if (steps.value !== '') body.maxSteps = Number(steps.value);
        try {
          const next = await api('POST', view.base + '/resume', body);
          location.hash = '#/executions/' + next.id;
        } catch (e) {
          err.hidden = false;
          err.textContent = 'Resume refused (' + (e.code || e.status) + '): ' + e.message;
        } finally {
          button.disabled = false;
        }
      },
    }, why, message, steps, button, err);
  }

  // tree lists the children of execution id, each with its own children
  // nested under it.
  async function tree(id, depth) {
    const kids = await pages('/agent-executions/' + id + '/children', 'agentExecutions');
    if (!kids.length) return null;
    const items = await Promise.all(kids.map(async (c) => {
      const cost = el('span', { class: 'child-cost', text: '…' });
      api('GET', '/agent-executions/' + c.id + '/usage')
        .then((u) => { cost.textContent = fmtCost(u.total && u.total.cost); })
        .catch(() => { cost.textContent = ''; });
      const name = (c.input && c.input.userPrompt) || c.id;
      const nested = depth + 1 < MAX_DEPTH ? await tree(c.id, depth + 1) : null;
      return el('li', { class: 'child', 'data-id': c.id },
        badge(c.status), ' ', el('a', { href: '#/executions/' + c.id, title: name, text: name.slice(0, 60) }),
        el('span', { class: 'muted' }, ' · steps ' + (c.stepCount || 0) + (c.durationMs ? ' · ' + fmtDuration(c.durationMs) : '') + ' · '), cost,
        c.resumedFrom ? el('span', { class: 'muted' }, ' · resumes ', link(c.resumedFrom)) : null,
        nested);
    }));
    return el('ul', { class: 'children' }, items);
  }

  async function panel(view) {
    const t = await tree(view.id, 0);
    return t || el('p', { class: 'muted', text: 'No sub-agents.' });
  }

  window.agentree.headers.push(header);
  window.agentree.panels.push({ name: 'Sub-agents', className: 'children-panel', load: panel });
})();
