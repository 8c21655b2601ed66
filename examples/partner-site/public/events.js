// /events: shows each webhook event the site's server has verified, as it arrives.
(function () {
  'use strict';
  var list = document.getElementById('events');
  var empty = document.getElementById('no-events');
  var source = new EventSource('/events/stream');
  source.onmessage = function (message) {
    var event = JSON.parse(message.data);
    var item = document.createElement('li');
    item.setAttribute('data-type', event.type);
    var title = document.createElement('strong');
    title.textContent = event.type; // text, never markup: event data names people and identities
    var when = document.createElement('time');
    when.textContent = ' ' + event.timestamp + ' ';
    var data = document.createElement('code');
    data.textContent = JSON.stringify(event.data);
    item.appendChild(title);
    item.appendChild(when);
    item.appendChild(data);
    list.insertBefore(item, list.firstChild);
    if (empty) empty.hidden = true;
  };
})();
