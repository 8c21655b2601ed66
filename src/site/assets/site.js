// Progressive enhancement for the idsvc site. Every page works without this file; with it, forms
// get a live profile-URL preview, a service filter, password visibility toggles and small comforts.
'use strict';

(function () {
  // --- Focus the error summary so screen-reader and keyboard users land on what went wrong.
  var summary = document.querySelector('[data-autofocus]');
  if (summary) summary.focus();

  // --- Show / hide password.
  document.querySelectorAll('input[data-password]').forEach(function (input) {
    var wrap = document.createElement('div');
    wrap.className = 'password-wrap';
    input.parentNode.insertBefore(wrap, input);
    wrap.appendChild(input);
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'button ghost small password-toggle';
    button.textContent = 'Show';
    button.setAttribute('aria-label', 'Show password');
    button.setAttribute('aria-pressed', 'false');
    button.addEventListener('click', function () {
      var show = input.type === 'password';
      input.type = show ? 'text' : 'password';
      button.textContent = show ? 'Hide' : 'Show';
      button.setAttribute('aria-label', show ? 'Hide password' : 'Show password');
      button.setAttribute('aria-pressed', String(show));
    });
    wrap.appendChild(button);
  });

  // --- Profile URL of an identifier: the same rules as src/catalogue/profile-url.ts.
  var MASTODON = /^@?([A-Za-z0-9_]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})$/;
  var HOST_ID = /^[A-Za-z0-9_-]{1,63}(?:\.[A-Za-z0-9_-]{1,63})*$/;

  function asHttpUrl(candidate) {
    try {
      var u = new URL(candidate);
      return u.protocol === 'http:' || u.protocol === 'https:' ? candidate : '';
    } catch (e) {
      return '';
    }
  }

  function profileUrl(data, raw) {
    var id = raw.trim();
    if (data.builder === 'mastodon') {
      var m = MASTODON.exec(id);
      return m ? asHttpUrl('https://' + m[2].toLowerCase() + '/@' + m[1]) : '';
    }
    if (data.builder === 'website') return websiteUrl(id);
    if (data.builder || !data.left) return '';
    if (data.left.endsWith('@') && id.startsWith('@')) id = id.slice(1);
    if (id === '' || id === '.' || id === '..') return '';
    var afterScheme = data.left.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
    var position = /[?#]/.test(data.left) ? 'query' : afterScheme.indexOf('/') >= 0 ? 'path' : 'host';
    var encoded;
    if (position === 'host') {
      if (!HOST_ID.test(id)) return '';
      encoded = id;
    } else {
      try {
        encoded = encodeURIComponent(id).replace(/%40/g, '@').replace(/%3A/g, ':');
      } catch (e) {
        return '';
      }
      if (position === 'path') encoded = encoded.replace(/%2B/g, '+');
    }
    return asHttpUrl(data.left + encoded + data.right);
  }

  // A person's website: https only, no credentials, port or IP literal (profile-url.ts `websiteUrl`).
  function websiteUrl(id) {
    if (id === '' || id.length > 255 || /[\u0000-\u001f\u007f]/.test(id)) return '';
    var candidate = /^https:\/\//i.test(id) ? id : /^[a-z][a-z0-9+.-]*:/i.test(id) || /^[/\\]/.test(id) ? '' : 'https://' + id;
    if (!candidate) return '';
    var u;
    try {
      u = new URL(candidate);
    } catch (e) {
      return '';
    }
    if (u.protocol !== 'https:' || u.username || u.password || u.port) return '';
    var labels = u.hostname.split('.');
    if (u.hostname.length > 253 || labels.length < 2) return '';
    for (var i = 0; i < labels.length; i++) {
      if (!/^[a-z0-9-]{1,63}$/.test(labels[i]) || labels[i].charAt(0) === '-' || labels[i].slice(-1) === '-') return '';
    }
    if (/^[0-9]+$/.test(labels[labels.length - 1])) return '';
    u.hash = '';
    return u.href;
  }

  function fitsPattern(pattern, id) {
    if (!pattern) return true;
    try {
      return new RegExp(pattern).test(id);
    } catch (e) {
      return true;
    }
  }

  var select = document.querySelector('select[data-preview-select]');
  var idInput = document.querySelector('input[data-preview-input]');
  var output = document.querySelector('[data-preview-output]');
  if (select && idInput && output) {
    var dataOf = function (svcId) {
      var all = select.querySelectorAll('option[data-left]');
      for (var i = 0; i < all.length; i++) {
        if (all[i].value === svcId)
          return {
            name: all[i].textContent,
            left: all[i].dataset.left || '',
            right: all[i].dataset.right || '',
            builder: all[i].dataset.builder || '',
            pattern: all[i].dataset.pattern || '',
            patternHelp: all[i].dataset.patternHelp || '',
          };
      }
      return null;
    };
    var update = function () {
      var svc = dataOf(select.value);
      var id = idInput.value;
      output.textContent = '';
      if (!svc) {
        output.textContent = 'Pick a service and type your name there to see the address of your profile.';
        return;
      }
      if (id.trim() === '') {
        output.textContent = 'Type your name on ' + svc.name + ' to see the address of your profile.';
        return;
      }
      var url = profileUrl(svc, id);
      if (url) {
        output.append('Your profile address will be ');
        var strong = document.createElement('strong');
        strong.textContent = url;
        output.append(strong);
      } else {
        output.textContent = svc.left || svc.builder ? 'That does not give a valid address on ' + svc.name + '.' : svc.name + ' has no public profile pages.';
      }
      if (!fitsPattern(svc.pattern, id.trim())) {
        var warn = document.createElement('span');
        warn.className = 'warn';
        // The server refuses such a name; say so now, with what the service allows.
        warn.textContent = ' This is not a name ' + svc.name + ' allows. ' + svc.patternHelp;
        output.append(warn);
      }
    };
    select.addEventListener('change', update);
    idInput.addEventListener('input', update);
    if (select.value) update();
  }

  // --- A pasted profile URL fills in the service and the name (the user still presses "Add").
  var pasted = document.querySelector('input[data-recognise]');
  var said = document.querySelector('[data-recognised]');
  if (pasted && said && select && idInput) {
    var timer = null;
    var asked = '';
    var recognise = function () {
      var url = pasted.value.trim();
      if (url === '' || url === asked) return;
      asked = url;
      fetch(pasted.dataset.recognise + '?url=' + encodeURIComponent(url), { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(function (res) {
          return res.ok ? res.json() : null;
        })
        .then(function (found) {
          if (!found || url !== pasted.value.trim()) return;
          if (found.kind === 'match') {
            select.value = found.svcId;
            idInput.value = found.usrSvcId;
            select.dispatchEvent(new Event('change'));
            said.textContent = 'That is ' + found.usrSvcId + ' on ' + found.svcName + '. Check the service and name below, then press “Add identity”.';
          } else if (found.kind === 'ambiguous') {
            said.textContent =
              'That address fits several services (' +
              found.candidates
                .map(function (c) {
                  return c.svcId;
                })
                .join(', ') +
              '). Choose the service yourself.';
          } else {
            said.textContent = 'We know no service with profile addresses like that. Choose the service and type your name there.';
          }
        })
        .catch(function () {});
    };
    pasted.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(recognise, 250);
    });
  }

  // --- "Find my identities": show the walk's progress, and its results when it is done.
  var poll = document.querySelector('[data-discovery-poll]');
  if (poll) {
    var pagesOut = poll.querySelector('[data-discovery-pages]');
    var tick = function () {
      fetch(poll.dataset.discoveryPoll, { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(function (res) {
          return res.ok ? res.json() : null;
        })
        .then(function (state) {
          if (state && pagesOut) pagesOut.textContent = String(state.pagesFetched);
          if (state && state.status !== 'queued' && state.status !== 'running') {
            window.location.assign('/account?msg=discovery_done#discover');
            return;
          }
          setTimeout(tick, 1000);
        })
        .catch(function () {
          setTimeout(tick, 3000);
        });
    };
    setTimeout(tick, 1000);
  }

  // --- Filter the long service list as the user types.
  document.querySelectorAll('input[data-filter-for]').forEach(function (filter) {
    var target = document.getElementById(filter.dataset.filterFor);
    if (!target) return;
    filter.hidden = false;
    filter.addEventListener('input', function () {
      var q = filter.value.trim().toLowerCase();
      var first = null;
      target.querySelectorAll('option').forEach(function (opt) {
        if (!opt.value) return;
        var match = q === '' || opt.textContent.toLowerCase().indexOf(q) >= 0 || opt.value.indexOf(q) >= 0;
        opt.hidden = !match;
        if (match && !first && opt.dataset.left !== undefined) first = opt;
      });
      var current = target.selectedOptions[0];
      if (q !== '' && first && (!current || !current.value || current.hidden)) {
        target.value = first.value;
        target.dispatchEvent(new Event('change'));
      }
    });
  });

  // --- "Verify now" can take a few seconds: say so.
  document.querySelectorAll('form[action="/account/identities/verify"]').forEach(function (form) {
    form.addEventListener('submit', function () {
      var b = form.querySelector('button');
      if (b) {
        b.textContent = 'Checking…';
        b.setAttribute('aria-disabled', 'true');
      }
      form.setAttribute('aria-busy', 'true');
    });
  });

  // --- Deleting needs the userId typed exactly.
  document.querySelectorAll('input[data-confirm]').forEach(function (input) {
    var button = input.form && input.form.querySelector('button[type="submit"]');
    if (!button) return;
    var sync = function () {
      var ok = input.value.trim() === input.dataset.confirm;
      button.disabled = !ok;
    };
    input.addEventListener('input', sync);
    sync();
  });

  // --- Copy the rel="me" snippet.
  document.querySelectorAll('[data-copy]').forEach(function (code) {
    if (!navigator.clipboard) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'button small secondary';
    button.textContent = 'Copy';
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(code.textContent).then(function () {
        button.textContent = 'Copied';
        setTimeout(function () {
          button.textContent = 'Copy';
        }, 2000);
      });
    });
    var pre = code.closest('pre');
    pre.parentNode.insertBefore(button, pre.nextSibling);
  });
})();
