/* chunklab book: glue between the ipywidgets HTML manager and this site (our code, not vendored).
 *
 * 1. ipywidgets' typeset() still calls the MathJax 2 API (MathJax.Hub.Queue) whenever
 *    window.MathJax exists; the site uses MathJax 3, so rendering a widget with a
 *    description would throw. Give every object assigned to window.MathJax a
 *    non-enumerable Hub.Queue that forwards to MathJax 3's typesetPromise.
 * 2. embed-amd.js resolves its icon fonts relative to the URL require.js gives its
 *    AMD module id, by default under the *page's* folder, which 404s.
 */
(function () {
  "use strict";

  function queue() {
    var elements = [];
    for (var i = 0; i < arguments.length; i++) {
      var job = arguments[i];
      if (Array.isArray(job) && job[0] === "Typeset" && job[2]) elements.push(job[2]);
    }
    var mj = window.MathJax;
    if (elements.length && mj && mj.startup && mj.startup.promise && mj.typesetPromise) {
      mj.startup.promise.then(function () { return mj.typesetPromise(elements); });
    }
    // Before MathJax 3 has loaded, its startup typesets the whole page anyway.
  }

  function addHub(obj) {
    if (obj && typeof obj === "object" && !Object.prototype.hasOwnProperty.call(obj, "Hub")) {
      Object.defineProperty(obj, "Hub", { value: { Queue: queue }, enumerable: false, configurable: true });
    }
    return obj;
  }

  var current = addHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    enumerable: true,
    get: function () { return current; },
    set: function (value) { current = addHub(value); }
  });

  // require.js reads a global `require` object as its configuration. Map the AMD
  // module id of libembed-amd onto the folder embed-amd.js is served from (the
  // data-html-manager attribute, else ./html-manager/ beside this file), so that
  // the icon fonts it injects resolve there instead of under the page's folder.
  var me = document.currentScript;
  var dist = (me && me.getAttribute("data-html-manager")) ||
             (me ? new URL("html-manager/", me.src).href : null);
  if (dist && typeof window.require === "undefined") {
    window.require = { paths: { "@jupyter-widgets/html-manager/dist": dist.replace(/\/$/, "") } };
  }
})();
