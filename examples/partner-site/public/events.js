// /events: shows each webhook event the site's server has verified, as it arrives.
// Loaded in the page's head: it starts once the list below exists.
document.addEventListener('DOMContentLoaded', () => {
  const list = document.getElementById('events');
  const empty = document.getElementById('no-events');
  const source = new EventSource('/events/stream');
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    const item = document.createElement('li');
    item.setAttribute('data-type', event.type);
    // Text, never markup: event data names people and identities.
    const title = document.createElement('strong');
    title.textContent = event.type;
    const when = document.createElement('time');
    when.textContent = ` ${event.timestamp} `;
    const data = document.createElement('code');
    data.textContent = JSON.stringify(event.data);
    item.append(title, when, data);
    list.insertBefore(item, list.firstChild);
    if (empty) empty.hidden = true;
  };
});
