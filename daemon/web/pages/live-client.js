// The one script of the web pages (daemon/web/pages/live-client.js, served as /-/assets/live.js; pages read the same without it).
// - A running build's trace (<pre data-live-trace="/-/live/builds/N/trace">) follows live over the WebSocket the API
//   documents (daemon/live/trace.ts): the page's session cookie authenticates it, same-origin only.
// - A pipeline or build page whose status may still change (an element with data-status-url="...") polls that small JSON answer
//   and updates every badge marked data-status-of="pipeline" or data-status-of="build-N" without a reload.
'use strict';
(function () {
  var ACTIVE = { created: 1, pending: 1, running: 1 };
  var CSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;

  // The trace as text without terminal escapes or carriage-return overdraws (as the page renders it).
  function plain(text) {
    return text.replace(CSI, '').split('\n').map(function (l) {
      var cr = l.lastIndexOf('\r', l.length - 2);
      return l.slice(cr + 1).replace(/\r$/, '');
    }).join('\n');
  }

  function setBadge(el, status) {
    el.textContent = status;
    el.className = 'status status-' + status.replace(/[^a-z_]/g, '');
  }

  function followTrace(pre) {
    var url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + pre.getAttribute('data-live-trace');
    var ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    var decoder = new TextDecoder();
    var text = '';
    var scheduled = false;
    var live = document.getElementById('live-state');
    function render() {
      scheduled = false;
      var atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
      pre.textContent = plain(text);
      if (atEnd) window.scrollTo(0, document.body.scrollHeight);
    }
    function schedule() {
      if (!scheduled) {
        scheduled = true;
        (window.requestAnimationFrame || setTimeout)(render);
      }
    }
    ws.onmessage = function (e) {
      if (typeof e.data !== 'string') {
        text += decoder.decode(new Uint8Array(e.data), { stream: true });
        // trace bytes come only from a build that runs
        var shown = document.querySelector('[data-status-of="build"]');
        if (shown && (shown.textContent === 'pending' || shown.textContent === 'created')) setBadge(shown, 'running');
        return schedule();
      }
      var msg = JSON.parse(e.data);
      if (msg.type === 'status') {
        // the server sends the whole trace from its start: what the page showed is replaced by it
        text = '';
        pre.setAttribute('data-following', 'true');
        if (live) live.textContent = 'Following the trace live.';
      } else if (msg.type === 'reset') {
        text = '';
        decoder = new TextDecoder();
        schedule();
      } else if (msg.type === 'finished') {
        pre.setAttribute('data-following', 'finished');
        var badge = document.querySelector('[data-status-of="build"]');
        if (badge) setBadge(badge, msg.status);
        if (live) live.textContent = 'The build finished: ' + msg.status + '.';
        render();
      }
    };
    ws.onclose = function () {
      if (pre.getAttribute('data-following') === 'true' && live) live.textContent = 'Live updates stopped; reload the page to see more.';
    };
  }

  function pollStatuses(main) {
    var url = main.getAttribute('data-status-url');
    var delay = 3000;
    function tick() {
      fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } }).then(function (r) {
        return r.ok ? r.json() : null;
      }).then(function (s) {
        if (!s) return;
        var top = document.querySelector('[data-status-of="pipeline"]');
        if (top) setBadge(top, s.status);
        (s.builds || []).forEach(function (b) {
          var el = document.querySelector('[data-status-of="build-' + b.id + '"]');
          if (el) setBadge(el, b.status);
        });
        if (ACTIVE[s.status]) setTimeout(tick, delay);
      }, function () {
        setTimeout(tick, delay * 2);
      });
    }
    setTimeout(tick, delay);
  }

  var pre = document.querySelector('pre[data-live-trace]');
  if (pre && 'WebSocket' in window) followTrace(pre);
  var main = document.querySelector('[data-status-url]');
  if (main && 'fetch' in window) pollStatuses(main);
})();
