// Records script errors into the page, so that a reader (and the browser tests, reading the
// DOM) sees them: window errors, failed resources, unhandled rejections and console.error.
(function () {
  var list = [];
  function show() {
    var pre = document.getElementById('karakuri-errors');
    if (pre && list.length) {
      pre.hidden = false;
      pre.textContent = list.join('\n');
    }
  }
  function record(msg) {
    list.push(String(msg));
    document.documentElement.setAttribute('data-errors', String(list.length));
    show();
  }
  window.karakuriErrors = list;
  window.addEventListener('error', function (e) {
    if (e.target && e.target !== window && e.target.tagName) {
      record('cannot load <' + e.target.tagName.toLowerCase() + '>');
    } else {
      record('error: ' + (e.message || 'unknown') + (e.lineno ? ' (line ' + e.lineno + ':' + e.colno + ')' : ''));
    }
  }, true);
  window.addEventListener('unhandledrejection', function (e) {
    var r = e.reason;
    record('unhandled rejection: ' + (r && (r.stack || r.message) || r));
  });
  var consoleError = console.error;
  console.error = function () {
    record('console.error: ' + Array.prototype.map.call(arguments, String).join(' '));
    return consoleError.apply(console, arguments);
  };
  document.addEventListener('DOMContentLoaded', show);
  document.documentElement.setAttribute('data-errors', '0');
})();
