// The page's half of the widget contract (docs/widget.md). The widget never writes to idsvc itself:
// it tells the page, the page tells its own server, and the server (which holds the api_token)
// calls idsvc. Changes are sent one after another, in the order the person made them.
(function () {
  'use strict';
  var queue = Promise.resolve();

  function log(text, failed) {
    var list = document.getElementById('activity');
    if (!list) return;
    var item = document.createElement('li');
    item.textContent = text; // text, never markup: names and identifiers come from people
    if (failed) item.className = 'failed';
    list.appendChild(item);
  }

  function post(path, body) {
    return fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(body),
    });
  }

  // Called on every add, change and removal (a blank usrSvcId is a removal).
  window.service_change_callback_idsvc = function (userIdentifier, svcId, svcDisplay, usrSvcId, svcUrl) {
    queue = queue
      .then(function () {
        return post('/idsvc/service-change', { userIdentifier: userIdentifier, svcId: svcId, usrSvcId: usrSvcId });
      })
      .then(function (res) {
        return res.json();
      })
      .then(
        function (answer) {
          if (!answer.ok) return log('Could not save ' + svcDisplay + ': ' + answer.error, true);
          log(usrSvcId ? 'Saved ' + svcDisplay + ': ' + usrSvcId + (svcUrl ? ' (' + svcUrl + ')' : '') : 'Removed ' + svcDisplay + '.');
        },
        function () {
          log('Could not save ' + svcDisplay + ': the site did not answer.', true);
        },
      );
  };

  // Called when the person submits the widget's sync form. The answer of sync_user goes back to the
  // widget as it came, and the widget shows whether it worked.
  window.init_sync_user_idsvc = function (userIdentifier, email, password) {
    post('/idsvc/sync', { userIdentifier: userIdentifier, email: email, password: password })
      .then(function (res) {
        return res.text();
      })
      .then(
        function (answer) {
          window.handle_sync_results_idsvc(answer);
        },
        function () {
          window.handle_sync_results_idsvc({ error: { code: 'internal_error', message: 'The site did not answer.' } });
        },
      );
  };
})();
