// Agentree's web UI: one page, plain DOM, the public REST API only.
// The execution's status (from REST and the agent.* events) is the truth
// the page renders from; token and data events only fill in the answer
// being written (seed 002).
'use strict';

(() => {
  const store = window.sessionStorage;
  let session = { org: store.getItem('agentree.org') || '', key: store.getItem('agentree.key') || '' };
  // cleanups run when the page leaves a view: streams closed, timers stopped.
  let cleanups = [];
  const main = document.getElementById('main');
  const nav = document.getElementById('nav');

  const STATUSES = ['PENDING', 'RUNNING', 'WAITING', 'CANCELLING', 'COMPLETED', 'FAILED', 'CANCELLED', 'PAUSED'];
  const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'PAUSED']);
  const BUSY = new Set(['PENDING', 'RUNNING', 'CANCELLING']);

  // el builds an element: props are attributes, on* listeners, text.
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'value') e.value = v;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      e.append(kid instanceof Node ? kid : String(kid));
    }
    return e;
  }

  // svg builds an SVG element: attributes, and its text when given.
  function svg(tag, attrs, text) {
    const n = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
    if (text !== undefined) n.textContent = text;
    return n;
  }

  class APIError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }

  // api calls the REST API of the signed-in organization.
  async function api(method, path, body, as) {
    const who = as || session;
    const headers = { Authorization: 'Bearer ' + who.key };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch('/api/orgs/' + encodeURIComponent(who.org) + path,
        { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      throw new APIError(0, 'network', 'Cannot reach the gateway (' + err.message + ').');
    }
    const text = await res.text();
    let data = {};
    if (text) { try { data = JSON.parse(text); } catch { data = { message: text }; } }
    if (!res.ok) {
      if (res.status === 401 && !as) { signOut('Your session ended: the API key is no longer accepted.'); }
      throw new APIError(res.status, data.code || String(res.status), data.message || res.statusText);
    }
    return data;
  }

  // pages reads every page of a list.
  async function pages(path, field) {
    const out = [];
    let cursor = '';
    do {
      const sep = path.includes('?') ? '&' : '?';
      const p = await api('GET', path + sep + 'pageSize=500' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
      out.push(...(p[field] || []));
      cursor = p.nextCursor;
    } while (cursor);
    return out;
  }

  function alertBox() { return el('p', { class: 'error', role: 'alert', hidden: true }); }
  function showError(box, err) { box.hidden = false; box.textContent = err.message || String(err); }

  const fmtTime = (t) => (t ? new Date(t).toLocaleString() : '');
  function fmtDuration(ms) {
    ms = Number(ms || 0);
    if (!ms) return '';
    if (ms < 1000) return ms + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
  }
  const fmtCost = (c) => (c ? '$' + Number(c).toFixed(4) : '$0');
  const badge = (status) => el('span', { class: 'badge ' + status, text: status });

  // window.agentree is what the views in the other files (tree.js,
  // timeline.js, children.js, markdown.js…) build on: these helpers, and
  // the hooks an execution's page calls. Those files load after this one
  // and register before the first route (it runs at DOMContentLoaded).
  //   panels: {name, load(view) → Node, className?, wide?}: a panel on an
  //     execution's page, loaded when opened and refreshed with the
  //     transcript; wide ones go full width under the page, the others in
  //     the side column.
  //   headers: f(view, box): called whenever the execution's header is
  //     rendered; box is a span of its own in the header row.
  //   markdown(text) → Node: how an answer's text is shown (else plain).
  //   budget(b) → Node: the usage panel's budget part (budget.js).
  //   route(re, view), onLeave(f): pages of their own (search.js,
  //     counterfactual.js) and what to undo when one is left.
  // view is {id, base, execution(), messages(), refresh()}.
  const ext = window.agentree = {
    el, svg, api, pages, alertBox, showError, fmtTime, fmtDuration, fmtCost, badge,
    panels: [], headers: [], markdown: null, budget: null,
  };

  // keyRoles is what the signed-in key may do (GET /capabilities says),
  // asked once per sign-in; null when it could not be asked, so nothing is
  // hidden on a guess (the gateway refuses what the key lacks anyway).
  let rolesP = null;
  function keyRoles() {
    if (!rolesP) rolesP = api('GET', '/capabilities').then((c) => c.roles || []).catch(() => null);
    return rolesP;
  }

  function signOut(message) {
    rolesP = null;
    store.removeItem('agentree.key');
    session = { org: session.org, key: '' };
    store.setItem('agentree.notice', message || '');
    location.hash = '#/login';
  }

  // --- routing -----------------------------------------------------------

  const routes = [
    [/^#\/login$/, viewLogin],
    [/^#\/executions$/, viewExecutions],
    [/^#\/executions\/([\w-]+)$/, viewExecution],
    [/^#\/definitions$/, viewDefinitions],
    [/^#\/definitions\/new$/, () => viewDefinitionForm('')],
    [/^#\/definitions\/([\w-]+)$/, (m) => viewDefinitionForm(m[1])],
  ];

  function route() {
    for (const f of cleanups.splice(0)) f();
    const [path, query] = (location.hash || '#/executions').split('?');
    if (!session.key && path !== '#/login') { location.hash = '#/login'; return; }
    nav.hidden = !session.key;
    document.getElementById('who').textContent = session.key ? 'org ' + session.org : '';
    for (const [re, view] of routes) {
      const m = path.match(re);
      if (m) {
        main.replaceChildren();
        view(m, new URLSearchParams(query || ''));
        return;
      }
    }
    location.hash = '#/executions';
  }

  // --- sign in -----------------------------------------------------------

  function viewLogin() {
    document.title = 'Sign in · Agentree';
    const err = alertBox();
    err.id = 'login-error';
    const notice = store.getItem('agentree.notice');
    store.removeItem('agentree.notice');
    const org = el('input', { id: 'org', name: 'org', required: true, autocomplete: 'organization', value: session.org });
    const key = el('input', { id: 'key', name: 'key', type: 'password', required: true, autocomplete: 'off' });
    const submit = el('button', { type: 'submit', id: 'signin', text: 'Sign in' });
    const form = el('form', {
      class: 'card', 'aria-labelledby': 'signin-title',
      onsubmit: async (ev) => {
        ev.preventDefault();
        err.hidden = true;
        submit.disabled = true;
        const who = { org: org.value.trim(), key: key.value.trim() };
        try {
          await api('GET', '/agent-executions?pageSize=1', undefined, who);
          session = who;
          rolesP = null;
          store.setItem('agentree.org', who.org);
          store.setItem('agentree.key', who.key);
          location.hash = '#/executions';
        } catch (e) {
          showError(err, signInError(e, who.org));
        } finally {
          submit.disabled = false;
        }
      },
    },
    el('h1', { id: 'signin-title', text: 'Sign in' }),
    notice ? el('p', { class: 'notice', text: notice }) : null,
    el('label', { for: 'org', text: 'Organization (slug or ID)' }), org,
    el('label', { for: 'key', text: 'API key' }), key,
    el('p', null, submit), err);
    main.append(form);
    (session.org ? key : org).focus();
  }

  function signInError(e, org) {
    if (e.status === 401) return 'Sign-in failed: that API key was not accepted. Check the key and try again.';
    if (e.status === 404) return 'Sign-in failed: the key does not belong to organization "' + org + '".';
    if (e.status === 0) return e.message;
    return 'Sign-in failed: ' + e.message;
  }

  // --- executions list ---------------------------------------------------

  function viewExecutions(_, query) {
    document.title = 'Executions · Agentree';
    const err = alertBox();
    const status = el('select', { id: 'filter-status', name: 'status' },
      el('option', { value: '', text: 'Any status' }), STATUSES.map((s) => el('option', { value: s, text: s })));
    status.value = query.get('status') || '';
    const kind = el('input', { id: 'filter-kind', name: 'kind', placeholder: 'react-agent', value: query.get('kind') || '' });
    const applyFilters = () => {
      const q = new URLSearchParams();
      if (status.value) q.set('status', status.value);
      if (kind.value.trim()) q.set('kind', kind.value.trim());
      location.hash = '#/executions' + (q.toString() ? '?' + q : '');
    };
    status.addEventListener('change', applyFilters);
    kind.addEventListener('change', applyFilters);
    const body = el('tbody', { id: 'executions' });
    const more = el('button', { type: 'button', class: 'secondary', id: 'more', text: 'Load more', hidden: true });
    const table = el('table', { 'aria-label': 'Executions' },
      el('thead', null, el('tr', null, ['Status', 'First prompt', 'Kind', 'Definition', 'Started', 'Duration', 'Steps', 'Cost']
        .map((h, i) => el('th', { scope: 'col', class: [2, 3, 4, 6].includes(i) ? 'hide-narrow' : null, text: h })))),
      body);
    main.append(el('h1', { text: 'Executions' }), newExecutionForm(),
      el('div', { class: 'row', role: 'search' },
        el('div', null, el('label', { for: 'filter-status', text: 'Status' }), status),
        el('div', null, el('label', { for: 'filter-kind', text: 'Kind' }), kind)),
      err, el('div', { class: 'card table-wrap' }, table), more);

    const rows = new Map();
    let cursor = '';
    const filter = () => {
      const q = new URLSearchParams({ pageSize: '25' });
      if (status.value) q.set('status', status.value);
      if (kind.value.trim()) q.set('kind', kind.value.trim());
      return q;
    };
    async function load(next) {
      const q = filter();
      if (next) q.set('cursor', next);
      const page = await api('GET', '/agent-executions?' + q);
      for (const x of page.agentExecutions || []) upsert(x, false);
      return page.nextCursor || '';
    }
    function upsert(x, onTop) {
      let r = rows.get(x.id);
      if (!r) {
        r = { tr: el('tr', { 'data-id': x.id }), status: '' };
        rows.set(x.id, r);
        if (onTop) body.prepend(r.tr); else body.append(r.tr);
      }
      if (r.status === x.status && r.steps === x.stepCount) return;
      r.status = x.status;
      r.steps = x.stepCount;
      const prompt = (x.input && x.input.userPrompt) || x.summary || x.id;
      const cost = el('td', { class: 'cost', text: '…' });
      r.tr.replaceChildren(
        el('td', null, badge(x.status)),
        el('td', { class: 'prompt' }, el('a', { href: '#/executions/' + x.id, title: prompt, text: prompt })),
        el('td', { class: 'hide-narrow', text: x.kind }),
        el('td', { class: 'hide-narrow', text: x.agentDefinitionId ? x.agentDefinitionId.slice(0, 8) : '' }),
        el('td', { class: 'hide-narrow', text: fmtTime(x.startedAt || x.createdAt) }),
        el('td', { text: fmtDuration(x.durationMs) }),
        el('td', { class: 'hide-narrow', text: String(x.stepCount || 0) }),
        cost);
      api('GET', '/agent-executions/' + x.id + '/usage')
        .then((u) => { cost.textContent = fmtCost(u.total && u.total.cost); })
        .catch(() => { cost.textContent = ''; });
    }
    more.addEventListener('click', async () => {
      try { cursor = await load(cursor); more.hidden = !cursor; } catch (e) { showError(err, e); }
    });
    (async () => {
      try {
        cursor = await load('');
        more.hidden = !cursor;
        if (!rows.size) body.append(el('tr', { id: 'empty' }, el('td', { colspan: '8', class: 'muted', text: 'No executions yet.' })));
      } catch (e) { showError(err, e); }
    })();
    // Statuses update live: the first page is read again every few seconds.
    const timer = setInterval(async () => {
      try {
        const page = await api('GET', '/agent-executions?' + filter());
        const xs = page.agentExecutions || [];
        for (const x of xs.slice().reverse()) upsert(x, !rows.has(x.id));
        if (xs.length) document.getElementById('empty')?.remove();
      } catch { /* the next tick tries again */ }
    }, 2000);
    cleanups.push(() => clearInterval(timer));
  }

  function newExecutionForm(definition) {
    const err = alertBox();
    const id = (s) => 'new-' + s;
    const prompt = el('textarea', { id: id('prompt'), name: 'userPrompt', required: true });
    const mode = el('select', { id: id('mode'), name: 'mode' },
      el('option', { value: 'multi-turn', text: 'multi-turn (waits for follow-ups)' }),
      el('option', { value: 'one-shot', text: 'one-shot' }));
    const fields = [el('label', { for: id('prompt'), text: 'First message' }), prompt];
    let model, system, tools, kind;
    if (!definition) {
      model = el('input', { id: id('model'), name: 'model', placeholder: 'provider/modelId', required: true });
      kind = el('input', { id: id('kind'), name: 'kind', value: 'react-agent', required: true });
      system = el('textarea', { id: id('system'), name: 'systemPrompt' });
      tools = el('input', { id: id('tools'), name: 'tools', placeholder: 'comma-separated, e.g. search_notes, word_count' });
      fields.push(el('div', { class: 'row' },
        el('div', null, el('label', { for: id('model'), text: 'Model' }), model),
        el('div', null, el('label', { for: id('kind'), text: 'Kind' }), kind),
        el('div', null, el('label', { for: id('mode'), text: 'Mode' }), mode)),
      el('label', { for: id('system'), text: 'System prompt' }), system,
      el('label', { for: id('tools'), text: 'Tools' }), tools);
      api('GET', '/capabilities').then((c) => {
        const m = (c.models || []).find((e) => (e.models || []).length);
        if (m && !model.value) model.value = m.provider + '/' + m.models[0];
      }).catch(() => {});
    } else {
      fields.push(el('label', { for: id('mode'), text: 'Mode' }), mode);
    }
    const submit = el('button', { type: 'submit', id: id('start'), text: 'Start' });
    const form = el('form', {
      onsubmit: async (ev) => {
        ev.preventDefault();
        err.hidden = true;
        const req = { userPrompt: prompt.value, config: { mode: mode.value } };
        if (definition) {
          req.agentDefinitionId = definition;
        } else {
          const [provider, ...rest] = model.value.trim().split('/');
          req.kind = kind.value.trim();
          req.models = [{ provider, modelId: rest.join('/') }];
          if (system.value.trim()) req.systemPrompt = system.value;
          const names = tools.value.split(',').map((s) => s.trim()).filter(Boolean);
          if (names.length) req.tools = names;
        }
        submit.disabled = true;
        try {
          const x = await api('POST', '/agent-executions', req);
          location.hash = '#/executions/' + x.id;
        } catch (e) { showError(err, e); } finally { submit.disabled = false; }
      },
    }, fields, el('p', null, submit), err);
    return el('details', { class: 'card', open: definition ? true : null },
      el('summary', { text: definition ? 'Start an execution from this definition' : 'New execution' }), form);
  }

  // --- one execution -------------------------------------------------------

  function viewExecution(m) {
    const id = m[1];
    const base = '/agent-executions/' + id;
    document.title = 'Execution · Agentree';
    const err = alertBox();
    const title = el('h1', { text: 'Execution' });
    const status = el('span', { id: 'status' });
    const activity = el('span', { id: 'activity', role: 'status', 'aria-live': 'polite' });
    const cancel = el('button', { type: 'button', class: 'danger', id: 'cancel', text: 'Cancel', hidden: true });
    const transcript = el('div', { class: 'transcript', id: 'transcript', 'aria-live': 'polite', 'aria-label': 'Transcript' });
    const input = el('textarea', { id: 'message', name: 'message', disabled: true, placeholder: 'Send a follow-up…' });
    const send = el('button', { type: 'submit', id: 'send', text: 'Send', disabled: true });
    const composer = el('form', { class: 'composer', id: 'composer' },
      el('label', { for: 'message', text: 'Follow-up' }), input, el('p', { class: 'row' }, send));
    const meta = el('p', { class: 'muted', id: 'meta' });
    const panels = el('aside', { class: 'panels', 'aria-label': 'Details' });
    const widePanels = el('section', { class: 'wide-panels', 'aria-label': 'Debugger' });
    const extHeader = el('span', { class: 'ext-header' });
    main.append(el('div', { class: 'layout' },
      el('section', null, title, el('p', { class: 'row' }, el('span', null, status, ' ', activity), cancel, extHeader), meta, err, transcript, composer),
      panels), widePanels);

    let ex = null;
    // statusSeen counts what this page learned of the status after a read
    // (an event, a signal sent, a cancel): a read in flight meanwhile may
    // predate it, and must not put an older status back.
    let statusSeen = 0;
    function setStatus(s) { ex.status = s; statusSeen++; }
    let messages = [];
    let completed = new Set(); // model calls whose answers are among messages
    const live = new Map(); // model call → the answer being written
    const liveTools = new Map(); // tool call → {status, preview, isError}
    let pending = []; // tool calls waiting for approval
    const outputs = new Map(); // tool call → its record, once shown in full
    let sentText = null; // a follow-up sent and not yet in messages
    let lastEventId = 0;
    let ended = false;
    let stopped = false;
    let ctrl = null;
    cleanups.push(() => { stopped = true; if (ctrl) ctrl.abort(); });
    // What the registered panels and header hooks see of this page.
    const view = { id, base, execution: () => ex, messages: () => messages, refresh: () => refresh() };

    function renderHeader() {
      if (!ex) return;
      const prompt = (ex.input && ex.input.userPrompt) || '';
      title.textContent = prompt ? prompt.slice(0, 80) : 'Execution ' + id.slice(0, 8);
      status.replaceChildren(badge(ex.status));
      const busy = BUSY.has(ex.status);
      activity.className = busy ? 'spinner' : '';
      activity.textContent = ex.status === 'CANCELLING' ? 'Cancelling…' : ex.status === 'PENDING' ? 'Starting…' : busy ? 'Thinking…' : '';
      cancel.hidden = !(ex.status === 'RUNNING' || ex.status === 'WAITING' || ex.status === 'PENDING');
      const canSend = ex.status === 'WAITING' && pending.length === 0 && sentText === null;
      input.disabled = !canSend;
      send.disabled = !canSend;
      const asleep = ex.status === 'WAITING' && ex.wakeAt && 'asleep until ' + new Date(ex.wakeAt).toLocaleString();
      meta.textContent = [ex.kind, 'steps ' + (ex.stepCount || 0), fmtDuration(ex.durationMs), asleep, ex.stopReason && 'stop: ' + ex.stopReason]
        .filter(Boolean).join(' · ');
      if (ex.status === 'FAILED') showError(err, { message: 'Failed: ' + (ex.errorMessage || ex.error || 'unknown error') });
      for (const f of ext.headers) f(view, extHeader);
    }

    // toolCard renders one tool call: arguments, status, result preview,
    // and the full output on demand.
    function toolCard(call, result) {
      const state = liveTools.get(call.id) || {};
      let st = result ? (result.isError ? 'error' : 'completed') : state.status || 'running';
      if (!result && pending.some((p) => p.toolCallId === call.id)) st = 'awaiting_approval';
      else if (!result && ex && (TERMINAL.has(ex.status) || ex.status === 'WAITING') && st === 'running') st = 'not run';
      const preview = result ? textOf(result) : state.preview || '';
      const full = el('div', { class: 'full' });
      const showFull = (rec) => full.replaceChildren(
        el('pre', { text: typeof rec.output === 'string' ? rec.output : rec.output && typeof rec.output.text === 'string' ? rec.output.text : JSON.stringify(rec.output, null, 2) }),
        el('p', { class: 'muted', text: 'status ' + rec.status + (rec.durationMs ? ' · ' + fmtDuration(rec.durationMs) : '') + (rec.truncated ? ' · the model saw a truncated copy' : '') }));
      if (outputs.has(call.id)) showFull(outputs.get(call.id));
      const more = el('button', {
        type: 'button', class: 'link', text: 'Show full output',
        onclick: async () => {
          try {
            const rec = await api('GET', base + '/tool-calls/' + encodeURIComponent(call.id));
            outputs.set(call.id, rec); // kept across re-renders
            showFull(rec);
          } catch (e) { full.replaceChildren(el('p', { class: 'error', text: e.message })); }
        },
      });
      return el('div', { class: 'tool ' + st.replace(' ', '_'), 'data-call': call.id },
        el('strong', { text: call.name }), ' ', el('span', { class: 'muted tool-status', text: st }),
        el('details', null, el('summary', { text: 'Arguments' }), el('pre', { text: JSON.stringify(call.arguments, null, 2) })),
        preview ? el('pre', { class: 'result', text: preview.length > 600 ? preview.slice(0, 600) + '…' : preview }) : null,
        result || state.status === 'completed' || state.status === 'error' ? more : null, full);
    }

    const textOf = (msg) => (msg.content || []).filter((b) => b.type === 'text').map((b) => b.text).join('');

    function bubble(role, label) {
      return el('div', { class: 'msg ' + role }, el('span', { class: 'who', text: label }));
    }

    function renderTranscript() {
      const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
      const results = new Map();
      for (const msg of messages) if (msg.role === 'tool_result') results.set(msg.toolCallId, msg);
      const nodes = [];
      const carded = new Set(); // tool calls shown as cards, with their results
      for (const msg of messages) {
        if (msg.role === 'tool_result' && carded.has(msg.toolCallId)) continue;
        const b = bubble(msg.role, msg.role === 'assistant' ? 'Agent' : msg.role === 'user' ? 'You' : msg.role.replace('_', ' '));
        b.dataset.entry = msg.entryId;
        for (const block of msg.content || []) {
          if (block.type === 'text' && msg.role === 'assistant' && ext.markdown) b.append(el('div', { class: 'text md' }, ext.markdown(block.text)));
          else if (block.type === 'text') b.append(el('span', { class: 'text', text: block.text }));
          else if (block.type === 'thinking') b.append(el('details', { class: 'thinking' }, el('summary', { text: 'Thinking' }), block.thinking || ''));
          else if (block.type === 'tool_call' && block.toolCall) {
            carded.add(block.toolCall.id);
            b.append(toolCard(block.toolCall, results.get(block.toolCall.id)));
          }
        }
        nodes.push(b);
      }
      if (sentText !== null) {
        const b = bubble('user', 'You (sending)');
        b.append(el('span', { class: 'text', text: sentText }));
        nodes.push(b);
      }
      for (const [task, w] of live) {
        if (!completed.has(task)) nodes.push(w.el);
      }
      for (const p of pending) nodes.push(approvalCard(p));
      transcript.replaceChildren(...nodes);
      if (nearBottom) window.scrollTo(0, document.body.scrollHeight);
    }

    // liveAnswer is the bubble of the answer model call task is writing.
    function liveAnswer(task) {
      let w = live.get(task);
      if (!w) {
        const text = document.createTextNode('');
        const thinking = document.createTextNode('');
        const think = el('details', { class: 'thinking', hidden: true }, el('summary', { text: 'Thinking' }), thinking);
        const b = bubble('assistant live', 'Agent');
        b.dataset.task = task;
        b.append(think, el('span', { class: 'text' }, text));
        w = { el: b, text, thinking, think };
        live.set(task, w);
        transcript.append(b);
      }
      return w;
    }

    function approvalCard(p) {
      const reason = el('input', { id: 'reason-' + p.toolCallId, placeholder: 'Why (sent to the model)' });
      const decide = (decision, always) => async () => {
        try {
          await api('POST', base + '/tool-calls/' + encodeURIComponent(p.toolCallId) + '/approval',
            { decision, reason: decision === 'reject' ? reason.value : '', always: !!always });
          pending = pending.filter((q) => q.toolCallId !== p.toolCallId);
          renderHeader();
          renderTranscript();
        } catch (e) { showError(err, e); }
      };
      let args = p.arguments;
      try { args = JSON.stringify(typeof args === 'string' ? JSON.parse(args) : args, null, 2); } catch { /* as sent */ }
      const buttons = el('p', { class: 'row' },
        el('button', { type: 'button', class: 'approve', text: 'Approve', onclick: decide('approve') }),
        el('button', { type: 'button', class: 'secondary always', text: 'Always allow ' + p.toolName, onclick: decide('approve', true) }),
        el('span', null, el('label', { for: 'reason-' + p.toolCallId, class: 'sr-only', text: 'Reason for rejecting' }), reason),
        el('button', { type: 'button', class: 'danger reject', text: 'Reject', onclick: decide('reject') }));
      const cannot = el('p', { class: 'muted no-approve', text: 'This API key cannot decide tool calls: it lacks the approve role.' });
      cannot.hidden = true;
      keyRoles().then((roles) => {
        if (roles && !roles.includes('approve')) {
          buttons.remove();
          cannot.hidden = false;
        }
      });
      return el('div', { class: 'approval', role: 'group', 'aria-label': 'Approve ' + p.toolName },
        el('strong', { text: 'Approve ' + p.toolName + '?' }), p.risk ? el('span', { class: 'muted', text: ' risk: ' + p.risk }) : null,
        el('pre', { text: String(args) }), buttons, cannot);
    }

    async function loadExecution() {
      const seen = statusSeen;
      const fresh = await api('GET', base);
      // Newer news came while reading (a refresh is queued behind it):
      // keep its status rather than flip back, which would re-enable
      // Send a moment after it was pressed, or disable it as it is.
      if (ex && seen !== statusSeen) fresh.status = ex.status;
      ex = fresh;
      renderHeader();
    }
    async function loadMessages() {
      const all = await pages(base + '/messages', 'messages');
      messages = all;
      completed = new Set(all.filter((x) => x.taskExecutionId).map((x) => x.taskExecutionId));
      for (const t of completed) live.delete(t);
      if (sentText !== null && all.some((x) => x.role === 'user' && textOf(x) === sentText)) sentText = null;
      renderTranscript();
    }
    // refresh reloads the durable state, at most one at a time.
    let refreshing = null;
    let again = false;
    function refresh() {
      if (refreshing) { again = true; return refreshing; }
      refreshing = (async () => {
        try {
          await loadExecution();
          await loadMessages();
          renderHeader();
          refreshPanels();
        } catch (e) { if (!stopped) showError(err, e); }
        refreshing = null;
        if (again) { again = false; refresh(); }
      })();
      return refreshing;
    }

    function handle(name, data) {
      switch (name) {
        case 'token': {
          if (completed.has(data.taskExecutionId)) return;
          liveAnswer(data.taskExecutionId).text.appendData(data.data || '');
          return;
        }
        case 'data': {
          const d = data.data || {};
          const task = data.taskExecutionId;
          if (d.type === 'thinking_delta' && task && !completed.has(task)) {
            const w = liveAnswer(task);
            w.think.hidden = false;
            w.thinking.appendData(d.text || '');
          } else if (d.type === 'tool_result' && d.tool_call) {
            liveTools.set(d.tool_call.id || task, { status: d.result && d.result.isError ? 'error' : 'completed', preview: d.result && d.result.preview });
            renderTranscript();
          } else if (d.type === 'custom' && d.value && d.value.type === 'compaction' && d.value.phase === 'completed') {
            transcript.append(el('p', { class: 'notice', text: 'Context compacted: ' + (d.value.compactedMessages || 0) + ' messages summarised (' + (d.value.tokensBefore || 0) + ' → ' + (d.value.tokensAfter || 0) + ' tokens).' }));
          }
          return;
        }
        case 'task.started':
          liveTools.set(data.taskExecutionId, { status: 'running' });
          return;
        case 'task.completed':
        case 'task.failed':
          liveTools.set(data.taskExecutionId, { status: name === 'task.failed' ? 'error' : 'completed', preview: data.error || '' });
          renderTranscript();
          return;
        case 'stream_error':
          if (data.code === 'events_expired') { lastEventId = 0; refresh(); }
          return;
        default:
          if (!name.startsWith('agent.')) return;
          if (ex && data.status) setStatus(data.status);
          if (name === 'agent.waiting') pending = data.pendingToolCalls || [];
          else if (name !== 'agent.checkpoint') pending = [];
          if (name === 'agent.completed' || name === 'agent.failed' || name === 'agent.cancelled' || name === 'agent.paused') ended = true;
          renderHeader();
          refresh();
      }
    }

    // follow reads the consolidated stream from lastEventId on, and
    // reconnects after it after a network loss: no gap, no duplicate.
    async function follow() {
      let delay = 250;
      while (!stopped && !ended) {
        ctrl = new AbortController();
        const headers = { Authorization: 'Bearer ' + session.key };
        if (lastEventId) headers['Last-Event-ID'] = String(lastEventId);
        try {
          const res = await fetch('/api/orgs/' + encodeURIComponent(session.org) + base + '/stream/consolidated', { headers, signal: ctrl.signal });
          if (res.status === 401) { signOut('Your session ended: the API key is no longer accepted.'); return; }
          if (!res.ok) throw new Error('stream: HTTP ' + res.status);
          delay = 250;
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          let buf = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buf += value;
            let i;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              const raw = buf.slice(0, i);
              buf = buf.slice(i + 2);
              let evId = 0;
              let name = 'message';
              const lines = [];
              for (const line of raw.split('\n')) {
                if (line.startsWith(':')) continue;
                const c = line.indexOf(':');
                const field = c < 0 ? line : line.slice(0, c);
                const val = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
                if (field === 'id') evId = Number(val);
                else if (field === 'event') name = val;
                else if (field === 'data') lines.push(val);
              }
              if (!lines.length) continue;
              let data = null;
              try { data = JSON.parse(lines.join('\n')); } catch { continue; }
              handle(name, data || {});
              if (evId) lastEventId = evId;
            }
          }
        } catch (e) {
          if (stopped) return;
        }
        if (stopped || ended) return;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }

    composer.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const text = input.value.trim();
      if (!text || !ex || ex.status !== 'WAITING') return;
      sentText = text;
      input.value = '';
      renderHeader();
      renderTranscript();
      try {
        // The stream is open already: subscribe first, then signal.
        await api('POST', base + '/signal', { signalName: 'userMessage', signalValue: { text } });
        setStatus('RUNNING');
        renderHeader();
      } catch (e) {
        sentText = null;
        input.value = text;
        renderHeader();
        renderTranscript();
        showError(err, e);
      }
    });
    cancel.addEventListener('click', async () => {
      try {
        await api('DELETE', base);
        setStatus('CANCELLING');
        renderHeader();
      } catch (e) { showError(err, e); }
    });

    // Side panels: loaded when opened, refreshed with the transcript.
    const panelDefs = [
      ['Usage and cost', async () => {
        const u = await api('GET', base + '/usage');
        const lines = u.lines || [];
        const budget = ext.budget ? ext.budget(u.budget) : null; // budget.js
        if (!lines.length) return el('div', null, el('p', { class: 'muted', text: 'No model calls yet.' }), budget);
        return el('div', null, el('table', { 'aria-label': 'Usage per model' },
          el('thead', null, el('tr', null, ['Model', 'Calls', 'In', 'Out', 'Cost'].map((h) => el('th', { scope: 'col', text: h })))),
          el('tbody', null, lines.concat(lines.length > 1 ? [Object.assign({ key: 'total' }, u.total)] : []).map((l) => el('tr', null,
            el('td', { text: l.key }), el('td', { text: String(l.calls || 0) }), el('td', { text: String(l.inputTokens || 0) }),
            el('td', { text: String(l.outputTokens || 0) }), el('td', { text: fmtCost(l.cost) }))))), budget);
      }],
      ['Checkpoints', async () => {
        const page = await api('GET', base + '/checkpoints?pageSize=50');
        const cps = page.checkpoints || [];
        if (!cps.length) return el('p', { class: 'muted', text: 'None yet.' });
        return el('ol', null, cps.map((c) => el('li', { text: '#' + c.sequence + ' · ' + fmtTime(c.createdAt) })));
      }],
      ['Tool calls', async () => {
        const calls = await pages(base + '/tool-calls', 'toolCalls');
        if (!calls.length) return el('p', { class: 'muted', text: 'None.' });
        return el('ul', null, calls.map((c) => el('li', { text: c.toolName + ' · ' + c.status + (c.durationMs ? ' · ' + fmtDuration(c.durationMs) : '') })));
      }],
    ];
    const openPanels = [];
    for (const p of ext.panels) panelDefs.push([p.name, () => p.load(view), p]);
    for (const [name, load, p] of panelDefs) {
      const bodyEl = el('div', { class: 'panel-body' });
      const d = el('details', { class: 'card panel' + (p && p.className ? ' ' + p.className : '') }, el('summary', null, el('h3', { text: name })), bodyEl);
      const render = async () => {
        try { bodyEl.replaceChildren(await load()); } catch (e) { bodyEl.replaceChildren(el('p', { class: 'error', text: e.message })); }
      };
      d.addEventListener('toggle', () => { if (d.open) render(); });
      openPanels.push(() => { if (d.open) render(); });
      (p && p.wide ? widePanels : panels).append(d);
    }
    function refreshPanels() { for (const f of openPanels) f(); }

    (async () => {
      try {
        await loadExecution();
        await loadMessages();
      } catch (e) { showError(err, e); return; }
      follow();
    })();
  }

  // --- definitions ---------------------------------------------------------

  function viewDefinitions() {
    document.title = 'Definitions · Agentree';
    const err = alertBox();
    const body = el('tbody', { id: 'definitions' });
    main.append(el('h1', { text: 'Definitions' }),
      el('p', null, el('a', { href: '#/definitions/new', id: 'new-definition', text: 'New definition' })), err,
      el('div', { class: 'card table-wrap' }, el('table', { 'aria-label': 'Definitions' },
        el('thead', null, el('tr', null, ['Name', 'Kind', 'Models', 'Updated', ''].map((h) => el('th', { scope: 'col', text: h })))), body)));
    (async () => {
      try {
        const defs = await pages('/agent-definitions', 'agentDefinitions');
        if (!defs.length) body.append(el('tr', null, el('td', { colspan: '5', class: 'muted', text: 'No definitions yet.' })));
        for (const d of defs) {
          const del = el('button', { type: 'button', class: 'danger', text: 'Delete', 'aria-label': 'Delete ' + d.name });
          del.addEventListener('click', async () => {
            if (del.dataset.confirm !== 'yes') { del.dataset.confirm = 'yes'; del.textContent = 'Really delete?'; return; }
            try { await api('DELETE', '/agent-definitions/' + d.id); tr.remove(); } catch (e) { showError(err, e); }
          });
          const tr = el('tr', { 'data-id': d.id },
            el('td', null, el('a', { href: '#/definitions/' + d.id, text: d.name })),
            el('td', { text: d.kind }),
            el('td', { text: (d.models || []).map((m) => m.provider + '/' + m.modelId).join(', ') }),
            el('td', { text: fmtTime(d.updatedAt) }),
            el('td', null, del));
          body.append(tr);
        }
      } catch (e) { showError(err, e); }
    })();
  }

  function viewDefinitionForm(id) {
    document.title = (id ? 'Edit definition' : 'New definition') + ' · Agentree';
    const err = alertBox();
    const f = (name, label, tag, attrs) => {
      const input = el(tag || 'input', Object.assign({ id: 'def-' + name, name }, attrs || {}));
      return [input, el('label', { for: 'def-' + name, text: label })];
    };
    const [name, nameL] = f('name', 'Name', 'input', { required: true });
    const [slug, slugL] = f('slug', 'Slug (letters, digits, dashes)');
    const [desc, descL] = f('description', 'Description');
    const [kind, kindL] = f('kind', 'Kind', 'input', { required: true, value: 'react-agent' });
    const [system, systemL] = f('systemPrompt', 'System prompt', 'textarea');
    const [models, modelsL] = f('models', 'Models, one per line (provider/modelId; the first answers, the rest are fallbacks)', 'textarea', { required: true });
    const [tools, toolsL] = f('tools', 'Tools (comma-separated)');
    const [config, configL] = f('config', 'Config (JSON, e.g. {"mode": "multi-turn", "maxTurns": 20})', 'textarea');
    const submit = el('button', { type: 'submit', id: 'def-save', text: id ? 'Save' : 'Create' });
    const form = el('form', {
      class: 'card',
      onsubmit: async (ev) => {
        ev.preventDefault();
        err.hidden = true;
        let cfg;
        try { cfg = config.value.trim() ? JSON.parse(config.value) : undefined; } catch (e) { showError(err, { message: 'Config is not valid JSON: ' + e.message }); return; }
        const req = {
          name: name.value.trim(), slug: slug.value.trim(), description: desc.value, kind: kind.value.trim(), systemPrompt: system.value,
          models: models.value.split('\n').map((s) => s.trim()).filter(Boolean).map((s) => { const [p, ...r] = s.split('/'); return { provider: p, modelId: r.join('/') }; }),
          tools: tools.value.split(',').map((s) => s.trim()).filter(Boolean), config: cfg,
        };
        submit.disabled = true;
        try {
          if (id) await api('PUT', '/agent-definitions/' + id, req); else await api('POST', '/agent-definitions', req);
          location.hash = '#/definitions';
        } catch (e) { showError(err, e); } finally { submit.disabled = false; }
      },
    }, el('h1', { text: id ? 'Edit definition' : 'New definition' }),
    nameL, name, slugL, slug, descL, desc, kindL, kind, systemL, system, modelsL, models, toolsL, tools, configL, config,
    el('p', { class: 'row' }, submit, el('a', { href: '#/definitions', text: 'Back' })), err);
    main.append(form);
    if (id) {
      api('GET', '/agent-definitions/' + id).then((d) => {
        name.value = d.name || ''; slug.value = d.slug || ''; desc.value = d.description || ''; kind.value = d.kind || '';
        system.value = d.systemPrompt || ''; tools.value = (d.tools || []).join(', ');
        models.value = (d.models || []).map((m) => m.provider + '/' + m.modelId).join('\n');
        config.value = d.config && Object.keys(d.config).length ? JSON.stringify(d.config, null, 2) : '';
        main.append(newExecutionForm(id));
      }).catch((e) => showError(err, e));
    } else {
      api('GET', '/capabilities').then((c) => {
        const m = (c.models || []).find((e) => (e.models || []).length);
        if (m && !models.value) models.value = m.provider + '/' + m.models[0];
      }).catch(() => {});
    }
    name.focus();
  }

  // What the views in other files need besides the helpers above: routes
  // of their own (search.js, counterfactual.js) and cleanups when the page
  // is left.
  Object.assign(ext, {
    STATUSES, main,
    route: (re, view) => routes.push([re, view]),
    onLeave: (f) => cleanups.push(f),
  });

  document.getElementById('signout').addEventListener('click', () => signOut('Signed out.'));
  window.addEventListener('hashchange', route);
  // After the deferred files that register views have run.
  document.addEventListener('DOMContentLoaded', route);
})();
