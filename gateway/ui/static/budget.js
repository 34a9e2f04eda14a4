// The budget part of an execution's usage panel (issue 40): its caps, what
// it and its children spent, whether calls now go to the cheaper model, and
// every budget over its calls. app.js calls window.agentree.budget with the
// usage report's `budget` (absent for an execution under none).
(function () {
  'use strict';

  function node(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function cap(spent, max, unit) {
    const s = unit === 'USD' ? '$' + (spent || 0).toFixed(4) : String(spent || 0);
    if (!max) return s + ' (no cap)';
    const m = unit === 'USD' ? '$' + max : String(max);
    return s + ' of ' + m + ' ' + (unit === 'USD' ? '' : unit) + ' (' + Math.round(100 * (spent || 0) / max) + '%)';
  }

  window.agentree.budget = function (b) {
    if (!b) return null;
    const box = node('section', undefined, 'budget');
    box.setAttribute('aria-label', 'Budget');
    box.append(node('h4', 'Budget'));
    box.append(node('p', 'Tokens: ' + cap(b.spentTokens, b.maxTokens, 'tokens')));
    box.append(node('p', 'Cost: ' + cap(b.spentCostUsd, b.maxCostUsd, 'USD')));
    if (b.downgradeModel) {
      const to = b.downgradeModel.provider + '/' + b.downgradeModel.modelId;
      box.append(node('p', b.downgraded
        ? 'Downgraded: calls go to ' + to + ' (past ' + Math.round(100 * b.downgradeAt) + '% of a cap)'
        : 'Downgrades to ' + to + ' at ' + Math.round(100 * b.downgradeAt) + '% of a cap', b.downgraded ? 'warn' : 'muted'));
    }
    const limits = b.limits || [];
    if (limits.length > 1) {
      const list = node('ul');
      for (const l of limits) {
        list.append(node('li', l.scope + ': ' + cap(l.spentTokens, l.maxTokens, 'tokens') + ', ' +
          cap(l.spentCostUsd, l.maxCostUsd, 'USD') + (l.reached ? ' — spent' : ''), l.reached ? 'warn' : undefined));
      }
      box.append(list);
    }
    return box;
  };
})();
