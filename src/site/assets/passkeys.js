// Passkeys on the site: the "Log in with a passkey" button and the "Add a passkey" form. Both ask
// the server for a challenge, hand it to the browser's WebAuthn (through @simplewebauthn/browser,
// served by this site as SimpleWebAuthnBrowser) and send the answer back with the form's CSRF
// token. Without WebAuthn (or without this script) the forms stay hidden.
'use strict';

(function () {
  var lib = window.SimpleWebAuthnBrowser;
  if (!lib || !lib.browserSupportsWebAuthn()) return;

  function postJson(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    }).then(function (res) {
      return res
        .json()
        .catch(function () {
          return {};
        })
        .then(function (data) {
          return { ok: res.ok, data: data };
        });
    });
  }

  function wire(form, run) {
    var error = form.querySelector('[data-passkey-error]');
    var button = form.querySelector('button[type="submit"]');
    form.hidden = false;
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (button.disabled) return;
      button.disabled = true;
      error.hidden = true;
      var csrf = form.querySelector('input[name="_csrf"]').value;
      run(csrf)
        .then(function (answer) {
          if (answer.ok && answer.data.redirect) {
            window.location.assign(answer.data.redirect);
            return;
          }
          throw new Error(answer.data.error || 'That did not work. Reload the page and try again.');
        })
        .catch(function (e) {
          // The person closing the browser's dialog is not an error worth a red box.
          var cancelled = e && (e.name === 'NotAllowedError' || e.name === 'AbortError');
          error.textContent = cancelled ? 'No passkey was used. Try again when you are ready.' : e.message;
          error.hidden = false;
          button.disabled = false;
        });
    });
  }

  var login = document.querySelector('form[data-passkey-login]');
  if (login) {
    wire(login, function (csrf) {
      return postJson('/login/passkey/options', { _csrf: csrf }).then(function (answer) {
        if (!answer.ok) return answer;
        return lib.startAuthentication({ optionsJSON: answer.data.options }).then(function (response) {
          return postJson('/login/passkey', { _csrf: csrf, response: response });
        });
      });
    });
  }

  var add = document.querySelector('form[data-passkey-add]');
  if (add) {
    wire(add, function (csrf) {
      var name = add.querySelector('input[name="name"]').value;
      return postJson('/account/passkeys/options', { _csrf: csrf, name: name }).then(function (answer) {
        if (!answer.ok) return answer;
        return lib.startRegistration({ optionsJSON: answer.data.options }).then(function (response) {
          return postJson('/account/passkeys/add', { _csrf: csrf, response: response });
        });
      });
    });
  }
})();
