// markdown.js: an answer's text as Markdown, built as DOM nodes with
// createElement and textContent only — model text is never parsed as HTML,
// so raw HTML in it shows as the text it is. Headings, paragraphs,
// emphasis, code spans, fenced code, lists, block quotes, rules, links
// (http, https and same-origin relative URLs; any other scheme stays plain
// text) and images (same origin only; the page's CSP says img-src 'self'
// too). Anything it does not recognise, or that is left unclosed, is text.
'use strict';

(() => {
  const ext = window.agentree;
  const MAX_DEPTH = 8; // nesting of lists, quotes and emphasis; deeper is text
  const MAX_LINK = 2000; // characters of a link's label, and of its URL
  const AUTOLINK = new RegExp('<(https?://[^\\s<>]{1,' + MAX_LINK + '})>', 'iy'); // sticky: matched at lastIndex only

  // safeURL is href resolved against the page when it may be followed:
  // http or https (absolute, or relative to this origin); null otherwise.
  // The URL parser strips the tabs and newlines that hide a scheme
  // ("java\tscript:"), so the scheme checked is the one a browser would use.
  function safeURL(href) {
    let u;
    try { u = new URL(href, location.href); } catch { return null; }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    if (u.username || u.password) return null; // "https://bank@evil/" misleads
    return u;
  }
  const sameOrigin = (u) => u && u.origin === location.origin;

  // --- inline ---------------------------------------------------------------

  // inline appends the nodes of one span of text to parent. It stays
  // linear on hostile text ("*a *a *a…", "` ` `…"): a closing mark looked
  // for and not found is not looked for again (none), and brackets are
  // matched once for the whole text (closers).
  function inline(parent, text, depth) {
    const none = new Set();
    let close = null; // closers(text), once a link may start
    let plain = '';
    const flush = () => { if (plain) { parent.append(document.createTextNode(plain)); plain = ''; } };
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === '\\' && i + 1 < text.length && /[\\`*_[\]()#+\-.!<>~|]/.test(text[i + 1])) {
        plain += text[i + 1];
        i += 2;
        continue;
      }
      if (c === '`') {
        let n = 1;
        while (text[i + n] === '`') n++;
        const fence = '`'.repeat(n);
        const end = none.has(fence) ? -1 : text.indexOf(fence, i + n);
        if (end < 0) none.add(fence);
        if (end > 0) {
          flush();
          const code = document.createElement('code');
          code.textContent = text.slice(i + n, end).replace(/^ (.*) $/s, '$1');
          parent.append(code);
          i = end + n;
          continue;
        }
        plain += fence;
        i += n;
        continue;
      }
      if ((c === '*' || c === '_') && depth < MAX_DEPTH) {
        const strong = text[i + 1] === c;
        const mark = strong ? c + c : c;
        const start = i + mark.length;
        const opens = !/\s/.test(text[start] || ' ') && !(c === '_' && /\w/.test(text[i - 1] || ''));
        // The closing mark: the next one not preceded by a space, after
        // at least one character.
        let end = -1;
        if (opens && !none.has(mark)) {
          end = text.indexOf(mark, start + 1);
          while (end > 0 && /\s/.test(text[end - 1])) end = text.indexOf(mark, end + 1);
          if (end < 0) none.add(mark);
        }
        if (end > 0) {
          flush();
          const node = document.createElement(strong ? 'strong' : 'em');
          inline(node, text.slice(start, end), depth + 1);
          parent.append(node);
          i = end + mark.length;
          continue;
        }
      }
      if ((c === '[' || (c === '!' && text[i + 1] === '[')) && depth < MAX_DEPTH) {
        close = close || closers(text);
        const link = linkAt(text, c === '!' ? i + 1 : i, close);
        if (link) {
          flush();
          if (c === '!') parent.append(image(link, text.slice(i, link.end)));
          else parent.append(anchor(link, text.slice(i, link.end), depth));
          i = link.end;
          continue;
        }
      }
      if (c === '<') {
        // An autolink <https://…>; any other "<…>" is raw HTML: text.
        AUTOLINK.lastIndex = i;
        const m = AUTOLINK.exec(text);
        if (m) {
          flush();
          parent.append(anchor({ label: m[1], href: m[1] }, m[0], depth));
          i += m[0].length;
          continue;
        }
      }
      plain += c;
      i++;
    }
    flush();
  }

  // closers maps each "[" and "(" of text to the index of the bracket
  // that closes it (-1: none), in one pass: a link is then found without
  // scanning ahead from every bracket of a text full of them.
  function closers(text) {
    const close = new Int32Array(text.length).fill(-1);
    const open = { '[': [], '(': [] };
    const pair = { ']': '[', ')': '(' };
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '\\') i++;
      else if (c === '[' || c === '(') open[c].push(i);
      else if (pair[c] && open[pair[c]].length) close[open[pair[c]].pop()] = i;
    }
    return close;
  }

  // linkAt parses "[label](href)" at text[i] ("[" there); null if it is
  // not one. Brackets and parentheses nest; an unclosed one, a URL over
  // a line, or either part past MAX_LINK characters is no link.
  function linkAt(text, i, close) {
    const j = close[i];
    if (j < 0 || j - i > MAX_LINK || text[j + 1] !== '(') return null;
    const k = close[j + 1];
    if (k < 0 || k - j > MAX_LINK) return null;
    let href = text.slice(j + 2, k);
    if (href.includes('\n')) return null;
    href = href.trim();
    const titled = /^(\S+)\s+(".*"|'.*')$/s.exec(href); // [a](url "title"): the title is dropped
    if (titled) href = titled[1];
    if (href.startsWith('<') && href.endsWith('>')) href = href.slice(1, -1);
    return { label: text.slice(i + 1, j), href, end: k + 1 };
  }

  // anchor is a link to a safe URL, else its source as text.
  function anchor(link, source, depth) {
    const u = safeURL(link.href);
    if (!u) return document.createTextNode(source);
    const a = document.createElement('a');
    a.href = u.href;
    a.rel = 'noopener noreferrer nofollow';
    if (!sameOrigin(u)) a.target = '_blank';
    inline(a, link.label || link.href, depth + 1);
    return a;
  }

  // image is a same-origin image, else its source as text.
  function image(link, source) {
    const u = safeURL(link.href);
    if (!sameOrigin(u)) return document.createTextNode(source);
    const img = document.createElement('img');
    img.src = u.href;
    img.alt = link.label;
    img.loading = 'lazy';
    return img;
  }

  // --- blocks ---------------------------------------------------------------

  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
  // No pattern here backtracks more than linearly on a long line.
  const HEADING = /^ {0,3}(#{1,6})(?:\s|$)/;
  const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
  const ITEM = /^( *)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const QUOTE = /^ {0,3}> ?(.*)$/;
  const blank = (l) => /^\s*$/.test(l);
  const indent = (l) => l.match(/^ */)[0].length;

  // headingText is a heading's text without the closing #s ("# a #").
  function headingText(rest) {
    const t = rest.trim();
    let k = t.length;
    while (k > 0 && t[k - 1] === '#') k--;
    return k === 0 || /\s/.test(t[k - 1]) ? t.slice(0, k).trim() : t;
  }

  // blocks appends the blocks of lines to parent.
  function blocks(parent, lines, depth) {
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (blank(line)) { i++; continue; }
      let m;
      if ((m = FENCE.exec(line))) {
        // Fenced code: to the closing fence, or to the end when unclosed.
        const body = [];
        i++;
        while (i < lines.length && !(lines[i].trim().startsWith(m[1][0].repeat(m[1].length)) && lines[i].trim().replace(/[`~]/g, '') === '')) body.push(lines[i++]);
        i++;
        const pre = document.createElement('pre');
        const code = document.createElement('code');
        if (/^[\w+-]{1,20}$/.test(m[2])) code.className = 'language-' + m[2];
        code.textContent = body.join('\n');
        pre.append(code);
        parent.append(pre);
        continue;
      }
      if ((m = HEADING.exec(line))) {
        const h = document.createElement('h' + m[1].length);
        inline(h, headingText(line.slice(m[0].length)), 0);
        parent.append(h);
        i++;
        continue;
      }
      if (RULE.test(line)) {
        parent.append(document.createElement('hr'));
        i++;
        continue;
      }
      if (QUOTE.test(line) && depth < MAX_DEPTH) {
        const inner = [];
        while (i < lines.length && (m = QUOTE.exec(lines[i]))) { inner.push(m[1]); i++; }
        const q = document.createElement('blockquote');
        blocks(q, inner, depth + 1);
        parent.append(q);
        continue;
      }
      if ((m = ITEM.exec(line)) && depth < MAX_DEPTH) {
        i = list(parent, lines, i, depth);
        continue;
      }
      // A paragraph: up to a blank line or the start of another block.
      const para = [];
      while (i < lines.length && !blank(lines[i]) && (para.length === 0 ||
        !(FENCE.test(lines[i]) || HEADING.test(lines[i]) || RULE.test(lines[i]) || QUOTE.test(lines[i]) || ITEM.test(lines[i])))) {
        para.push(lines[i++].trim());
      }
      const p = document.createElement('p');
      inline(p, para.join('\n'), 0);
      parent.append(p);
    }
  }

  // list appends the list starting at lines[i] and returns the index after
  // it. An item holds the lines indented past its marker (nested lists,
  // continued text); a blank line between items does not end the list.
  function list(parent, lines, i, depth) {
    const first = ITEM.exec(lines[i]);
    const base = first[1].length;
    const ordered = /\d/.test(first[2]);
    const el = document.createElement(ordered ? 'ol' : 'ul');
    if (ordered && parseInt(first[2], 10) !== 1) el.start = parseInt(first[2], 10);
    while (i < lines.length) {
      const m = ITEM.exec(lines[i]);
      if (!m || m[1].length !== base || /\d/.test(m[2]) !== ordered) break;
      const inner = [m[3]];
      const within = base + m[2].length + 1;
      i++;
      while (i < lines.length) {
        const l = lines[i];
        if (blank(l)) {
          if (i + 1 < lines.length && indent(lines[i + 1]) >= within) { inner.push(''); i++; continue; }
          break;
        }
        const sub = ITEM.exec(l);
        if (indent(l) < within && (sub || inner.length === 0 || blank(inner[inner.length - 1]))) break;
        if (indent(l) <= base && sub) break;
        inner.push(l.slice(Math.min(indent(l), within)));
        i++;
      }
      const li = document.createElement('li');
      if (inner.length === 1 || !inner.slice(1).some((l) => ITEM.test(l) || FENCE.test(l) || QUOTE.test(l))) inline(li, inner.join('\n').trim(), 0);
      else blocks(li, inner, depth + 1);
      el.append(li);
      while (i < lines.length && blank(lines[i]) && i + 1 < lines.length && (ITEM.exec(lines[i + 1]) || [])[1] === first[1]) i++;
    }
    parent.append(el);
    return i;
  }

  // markdown is text rendered: a fragment of block elements.
  function markdown(text) {
    const frag = document.createDocumentFragment();
    blocks(frag, String(text).replace(/\r\n?/g, '\n').split('\n'), 0);
    return frag;
  }

  ext.markdown = markdown;
})();
