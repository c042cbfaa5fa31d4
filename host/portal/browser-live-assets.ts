/**
 * @module host/portal/browser-live-assets
 * The live browser view's script and stylesheet, served from the gateway's own origin (the page's
 * CSP allows scripts from 'self' only: no inline script, nothing from elsewhere). The portal is
 * otherwise script-free; this page cannot be — it shows frames as they come and sends the
 * person's clicks and keys. The script long-polls `frame?after=<seq>` for the next JPEG (shown
 * through a blob: URL), and posts each input, in order, as a form with the page's CSRF token.
 * Screen coordinates are mapped to the page's viewport from the frame's size headers.
 */

export const LIVE_VIEW_SCRIPT = `'use strict';
(function () {
  var screen = document.getElementById('live-screen');
  var img = document.getElementById('live-frame');
  var state = document.getElementById('live-state');
  var take = document.getElementById('live-take');
  var release = document.getElementById('live-release');
  if (!screen || !img || !state || !take || !release) return;
  var base = '/browser/live/' + encodeURIComponent(screen.getAttribute('data-id') || '');
  var csrf = screen.getAttribute('data-csrf') || '';
  var seq = 0, width = 1280, height = 720, control = '', ended = false;
  var queue = Promise.resolve();
  var sleep = function (ms) { return new Promise(function (r) { setTimeout(r, ms); }); };

  function show(text) { if (state.textContent !== text) state.textContent = text; }
  function setControl(c) {
    if (ended || c === control) return;
    control = c;
    take.hidden = c === 'person';
    release.hidden = c !== 'person';
    screen.setAttribute('data-control', c);
    show(c === 'person'
      ? 'You have control: click, type and scroll on the page. Hand it back when you are done.'
      : 'Watching: the agent drives this browser. Take control to act on the page yourself.');
  }
  function end(text) { ended = true; take.hidden = true; release.hidden = true; screen.setAttribute('data-control', 'ended'); show(text); }
  function problem(status) {
    if (status === 401) end('You were signed out. Reload the page to sign in again.');
    else if (status === 403) end('This live view belongs to another account.');
    else if (status === 404 || status === 410) end('This live view has ended. Ask the agent for a new link.');
  }

  async function poll() {
    while (!ended) {
      var res;
      try { res = await fetch(base + '/frame?after=' + seq, { cache: 'no-store', credentials: 'same-origin' }); }
      catch (e) { show('The connection was lost; trying again…'); await sleep(2000); continue; }
      if (res.status === 200 || res.status === 204) setControl(res.headers.get('x-live-control') || 'agent');
      if (res.status === 200) {
        seq = Number(res.headers.get('x-frame-seq')) || seq + 1;
        width = Number(res.headers.get('x-frame-width')) || width;
        height = Number(res.headers.get('x-frame-height')) || height;
        var next = URL.createObjectURL(await res.blob());
        var old = img.src;
        img.src = next;
        img.setAttribute('data-seq', String(seq));
        if (old.indexOf('blob:') === 0) URL.revokeObjectURL(old);
      } else if (res.status !== 204) { problem(res.status); if (!ended) await sleep(2000); }
    }
  }

  function send(path, fields) {
    var body = new URLSearchParams(fields);
    body.set('_csrf', csrf);
    queue = queue.then(function () {
      return fetch(base + path, { method: 'POST', body: body, credentials: 'same-origin' }).then(function (res) {
        if (res.status === 409) setControl('agent');
        else problem(res.status);
        return res;
      }, function () { show('The connection was lost; that input was not sent.'); });
    });
    return queue;
  }
  function point(ev) {
    var r = img.getBoundingClientRect();
    return {
      x: String(Math.max(0, Math.round((ev.clientX - r.left) * width / r.width))),
      y: String(Math.max(0, Math.round((ev.clientY - r.top) * height / r.height))),
    };
  }

  take.addEventListener('click', function () {
    send('/control', { action: 'take' }).then(function (res) { if (res && res.ok) { setControl('person'); screen.focus(); } });
  });
  release.addEventListener('click', function () {
    send('/control', { action: 'release' }).then(function (res) { if (res && res.ok) setControl('agent'); });
  });
  function click(button) {
    return function (ev) {
      if (control !== 'person') return;
      ev.preventDefault();
      var p = point(ev);
      send('/input', { kind: 'click', x: p.x, y: p.y, button: button });
      screen.focus();
    };
  }
  img.addEventListener('click', click('left'));
  img.addEventListener('auxclick', function (ev) { if (ev.button === 1) click('middle')(ev); });
  img.addEventListener('contextmenu', click('right'));
  screen.addEventListener('keydown', function (ev) {
    if (control !== 'person' || ['Control', 'Alt', 'Shift', 'Meta'].indexOf(ev.key) !== -1) return;
    ev.preventDefault();
    if (ev.key.length === 1 && !ev.ctrlKey && !ev.metaKey && !ev.altKey) { send('/input', { kind: 'text', text: ev.key }); return; }
    var mods = [];
    if (ev.ctrlKey) mods.push('Control');
    if (ev.altKey) mods.push('Alt');
    if (ev.metaKey) mods.push('Meta');
    if (ev.shiftKey && ev.key.length > 1) mods.push('Shift');
    send('/input', { kind: 'key', key: mods.concat([ev.key === ' ' ? 'Space' : ev.key]).join('+') });
  });
  screen.addEventListener('wheel', function (ev) {
    if (control !== 'person') return;
    ev.preventDefault();
    var p = point(ev);
    send('/input', { kind: 'scroll', x: p.x, y: p.y, dx: String(Math.round(ev.deltaX)), dy: String(Math.round(ev.deltaY)) });
  }, { passive: false });
  poll();
})();
`;

export const LIVE_VIEW_CSS = `
.live-controls{display:flex;gap:1rem;align-items:center;margin:.5rem 0}
.live-screen{border:2px solid var(--line,#d0d7de);max-width:100%;line-height:0;outline:none}
.live-screen[data-control=person]{border-color:var(--accent,#0b57d0)}
.live-screen:focus-visible{outline:3px solid var(--accent,#0b57d0);outline-offset:2px}
.live-screen[data-control=person] img{cursor:crosshair}
.live-screen img{width:100%;height:auto;display:block;background:#f6f8fa}
`;
