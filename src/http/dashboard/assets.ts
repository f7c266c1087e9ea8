/**
 * The dashboard's stylesheet (added to the pages' one) and its script. The script is progressive
 * enhancement only: every form works without it. It adds copy buttons for secrets shown once, upload
 * progress for media, and a confirmation before forms marked `data-confirm`.
 */
export const DASHBOARD_CSS = `:root { --warn: #8a4b00; }
@media (prefers-color-scheme: dark) { :root { --warn: #e3b341; } }
body.dashboard main { max-width: 64rem; margin: 1.5rem 0 4rem; }
.skip { position: absolute; left: -999px; top: 0; padding: .5rem 1rem; background: var(--bg); }
.skip:focus { left: .5rem; z-index: 10; }
.shell { display: grid; grid-template-columns: 13rem 1fr; gap: 0 1.5rem; max-width: 84rem; margin: 0 auto; }
.shell > nav { border-right: 1px solid var(--line); padding: 1rem; }
.shell > nav ul { list-style: none; margin: 0 0 1rem; padding: 0; }
.shell > nav li a { display: block; padding: .35rem .5rem; border-radius: .25rem; text-decoration: none; }
.shell > nav a[aria-current=page] { background: var(--panel); font-weight: 700; color: var(--fg); }
.switcher { margin: 0 0 .75rem; }
.switcher summary { cursor: pointer; font-weight: 600; padding: .35rem .5rem; }
.shell > main { min-width: 0; padding: 0 1rem; }
@media (max-width: 48rem) {
  .shell { grid-template-columns: 1fr; }
  .shell > nav { border-right: none; border-bottom: 1px solid var(--line); }
  .shell > nav ul { display: flex; flex-wrap: wrap; gap: .25rem; }
}
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
}
textarea {
  display: block; width: 100%; margin-top: .35rem; padding: .55rem .65rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem;
}
input[type=datetime-local], input[type=number], input[type=url], input[type=file], input[type=time] {
  display: block; margin-top: .35rem; padding: .45rem .6rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem; max-width: 100%;
}
textarea[aria-invalid=true], select[aria-invalid=true] { border: 2px solid var(--danger); }
fieldset {
  border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; margin: 0 0 1.25rem; min-width: 0;
}
.choice { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; margin: .25rem 0; }
.choice label { display: inline; font-weight: 400; }
.table-wrap { overflow-x: auto; margin: 0 0 1.5rem; position: relative; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: 600; padding: 0 0 .5rem; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td { overflow-wrap: break-word; }
td button { white-space: nowrap; }
form.inline { display: inline; margin: 0; }
button.danger { background: var(--danger); border-color: var(--danger); color: var(--accent-fg); }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: .85rem; border: 1px solid; }
.badge.ok { color: var(--ok); }
.badge.warn { color: var(--warn); }
.badge.danger { color: var(--danger); }
.badge.neutral { color: var(--muted); }
.secret { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret code { padding: .35rem .5rem; background: var(--panel); border-radius: .25rem; overflow-wrap: anywhere; }
.tabs { display: flex; flex-wrap: wrap; gap: .25rem .75rem; list-style: none; padding: 0; margin: 0 0 1rem; }
.tabs a[aria-current=page] { font-weight: 700; color: var(--fg); }
.pager { margin: 1rem 0; }
.chart { max-width: 100%; height: auto; color: var(--accent); }
.chart text { fill: var(--muted); font-size: 10px; }
progress { width: 100%; }
input[type=date] {
  display: block; margin-top: .35rem; padding: .45rem .6rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem; max-width: 100%;
}
.queue-grid td, .queue-grid th { text-align: center; }
.queue-grid td:first-child, .queue-grid th:first-child { text-align: left; }
.queue-grid input[type=time] { margin-top: 0; }
.queue-grid abbr { text-decoration: none; }
/* Posts, calendar and analytics. */
.post-text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0 0 .5rem; }
.post-items { padding-left: 1.5rem; margin: 0 0 1.5rem; }
.filters { margin: 0 0 1rem; }
.filters summary { cursor: pointer; font-weight: 600; }
.filters form, form.range { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: flex-end; }
.filters .field, form.range .field { margin-bottom: .75rem; }
form.range button, .filters button { margin-bottom: .75rem; }
input[type=date] {
  display: block; margin-top: .35rem; padding: .45rem .6rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem; max-width: 100%;
}
.week { list-style: none; padding: 0; margin: 0 0 1.5rem; display: grid; gap: .5rem;
  grid-template-columns: repeat(7, minmax(0, 1fr)); }
.week > li { border: 1px solid var(--line); border-radius: .375rem; padding: .5rem; min-width: 0; }
.week > li[aria-current=date] { border: 2px solid var(--accent); }
.week h2 { font-size: .95rem; margin: 0 0 .5rem; }
.week ul { list-style: none; padding: 0; margin: 0; }
.week ul li { margin: 0 0 .5rem; font-size: .9rem; overflow-wrap: anywhere; }
.week .published a { color: var(--muted); }
.week .slot { color: var(--muted); border: 1px dashed var(--line); border-radius: .25rem; padding: 0 .35rem; }
@media (max-width: 60rem) { .week { grid-template-columns: 1fr; } }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
.charts figure, figure { margin: 0 0 1rem; max-width: 100%; }
/* Destinations and webhooks. */
.connect-grid { display: grid; gap: 1rem;
  grid-template-columns: repeat(auto-fill, minmax(min(17rem, 100%), 1fr)); }
.connect-grid > section { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; }
.connect-grid h3 { margin: 0 0 .5rem; }
input[type=url] { width: 100%; }
.row-actions { display: flex; flex-wrap: wrap; gap: .5rem; }
ul.deliveries { list-style: none; padding: 0; }
ul.deliveries > li { border-bottom: 1px solid var(--line); padding: .5rem 0; }
details.delivery > summary { cursor: pointer; }
details.delivery h3 { font-size: 1rem; margin: 1rem 0 .35rem; }
pre.wire { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); padding: .5rem .75rem;
  border-radius: .25rem; margin: 0 0 .75rem; }
.compose-item .attached { list-style: none; padding: 0; margin: .25rem 0 .75rem; }
.compose-item .attached li { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .25rem 0; }
.compose-item .media-title { font-weight: 600; margin: .75rem 0 0; }
.compose-item > button { margin: .25rem .5rem .25rem 0; }
.compose .actions { display: flex; flex-wrap: wrap; gap: .5rem; }
`;

export const DASHBOARD_JS = `"use strict";
document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest("button[data-copy]");
  if (!button) return;
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(function () {
    var status = document.getElementById(button.getAttribute("data-copy") + "-status");
    if (status) status.textContent = "Copied.";
  });
});
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
document.querySelectorAll("button[data-copy]").forEach(function (b) { b.hidden = false; });
// Compose: a chosen file uploads at once with a progress bar and is attached to its item. The bytes go
// straight to the API's part URLs when they are on this origin, else through the dashboard's file route.
(function () {
  var form = document.querySelector("form.compose");
  var config = form && form.querySelector("[data-upload-start]");
  if (!config || !window.XMLHttpRequest || !window.crypto || !window.Promise) return;
  var csrf = form.querySelector("input[name=csrf_token]").value;
  var PART = 5242880;
  var pending = 0;
  /* crc64nvme:start */
  // CRC-64/NVME (reflected polynomial 0x9A6C9329AC4BC9B5) in two 32-bit halves, a byte at a time.
  var TL = new Uint32Array(256);
  var TH = new Uint32Array(256);
  for (var i = 0; i < 256; i++) {
    var lo = i;
    var hi = 0;
    for (var k = 0; k < 8; k++) {
      var odd = lo & 1;
      lo = (lo >>> 1) | ((hi & 1) << 31);
      hi = hi >>> 1;
      if (odd) { lo = lo ^ 0xac4bc9b5; hi = hi ^ 0x9a6c9329; }
    }
    TL[i] = lo >>> 0;
    TH[i] = hi >>> 0;
  }
  function crcStart() { return { lo: 0xffffffff, hi: 0xffffffff }; }
  function crcUpdate(state, bytes) {
    var lo = state.lo;
    var hi = state.hi;
    for (var j = 0; j < bytes.length; j++) {
      var index = (lo ^ bytes[j]) & 0xff;
      lo = ((lo >>> 8) | (hi << 24)) ^ TL[index];
      hi = (hi >>> 8) ^ TH[index];
    }
    state.lo = lo >>> 0;
    state.hi = hi >>> 0;
  }
  function crcBase64(state) {
    var hi = ~state.hi >>> 0;
    var lo = ~state.lo >>> 0;
    var bytes = [hi >>> 24, (hi >>> 16) & 255, (hi >>> 8) & 255, hi & 255,
      lo >>> 24, (lo >>> 16) & 255, (lo >>> 8) & 255, lo & 255];
    return btoa(String.fromCharCode.apply(null, bytes));
  }
  // One part's and the whole file's checksums, reading a MiB at a time (never the whole file).
  function checksums(file) {
    var whole = crcStart();
    var part = crcStart();
    var parts = [];
    function step(offset) {
      if (offset >= file.size) {
        if (file.size % PART !== 0 || parts.length === 0) parts.push(crcBase64(part));
        return Promise.resolve({ parts: parts, whole: crcBase64(whole) });
      }
      var end = Math.min(file.size, offset + 1048576);
      return file.slice(offset, end).arrayBuffer().then(function (buffer) {
        var bytes = new Uint8Array(buffer);
        crcUpdate(whole, bytes);
        crcUpdate(part, bytes);
        if (end % PART === 0) { parts.push(crcBase64(part)); part = crcStart(); }
        return step(end);
      });
    }
    return step(0);
  }
  /* crc64nvme:end */
  function send(method, url, headers, body, progress) {
    return new Promise(function (resolve, reject) {
      var x = new XMLHttpRequest();
      x.open(method, url);
      Object.keys(headers).forEach(function (name) { x.setRequestHeader(name, headers[name]); });
      if (progress) x.upload.onprogress = function (e) { progress(e.loaded); };
      x.onload = function () { resolve(x); };
      x.onerror = function () { reject(new Error("the connection failed")); };
      x.send(body);
    });
  }
  function answer(x, expected) {
    var body = {};
    try { body = JSON.parse(x.responseText); } catch (e) { body = {}; }
    if (expected.indexOf(x.status) >= 0) return body;
    var details = (body.errors || []).map(function (e) { return e.detail; });
    throw new Error([body.detail || "the server answered " + x.status].concat(details).join(" "));
  }
  function json(url, body) {
    var headers = { "content-type": "application/json", "x-csrf-token": csrf };
    return send("POST", url, headers, JSON.stringify(body));
  }
  function key() {
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }
  function through(file, id, shown) {
    var headers = { "content-type": file.type || "application/octet-stream", "x-csrf-token": csrf,
      "x-file-name": encodeURIComponent(file.name), "x-idempotency-key": id };
    return send("POST", config.getAttribute("data-upload-file"), headers, file, shown)
      .then(function (x) { return answer(x, [200]); });
  }
  function direct(file, id, sums, shown) {
    var start = config.getAttribute("data-upload-start");
    return json(start, { kind: file.type.indexOf("video/") === 0 ? "video" : "card", file_name: file.name,
      content_type: file.type || "application/octet-stream", byte_size: file.size,
      parts: sums.parts.map(function (c, n) { return { part_number: n + 1, checksum_crc64nvme: c }; }),
      idempotency_key: id + "-start" }).then(function (x) {
      var upload = answer(x, [200, 201]);
      var local = upload.parts.every(function (p) { return new URL(p.upload_url, location.href).origin === location.origin; });
      if (!local) return through(file, id, shown);
      var sent = [];
      var chain = Promise.resolve();
      upload.parts.forEach(function (p) {
        chain = chain.then(function () {
          var from = (p.part_number - 1) * upload.part_size;
          var bytes = file.slice(from, Math.min(file.size, from + upload.part_size));
          return send("PUT", p.upload_url, p.required_headers || {}, bytes, function (n) { shown(from + n); })
            .then(function (x) {
              answer(x, [200]);
              sent.push({ part_number: p.part_number, etag: x.getResponseHeader("etag"),
                checksum_crc64nvme: sums.parts[p.part_number - 1] });
            });
        });
      });
      return chain.then(function () {
        return json(start + "/" + encodeURIComponent(upload.id) + "/complete", { byte_size: file.size,
          checksum_crc64nvme: sums.whole, parts: sent, idempotency_key: id + "-complete" });
      }).then(function (x) { return answer(x, [200]); });
    });
  }
  function attach(n, asset) {
    var list = document.getElementById("f-body-" + n + "-attached");
    var item = document.createElement("li");
    var hidden = document.createElement("input");
    hidden.type = "hidden";
    hidden.name = "item_" + n + "_media";
    hidden.value = asset.id;
    var button = document.createElement("button");
    button.type = "submit";
    button.name = "op";
    button.value = "detach:" + n + ":" + asset.id;
    button.className = "secondary";
    button.textContent = "Detach";
    item.append(hidden, asset.label + " (" + asset.content_type + ") ", button);
    list.append(item);
  }
  function upload(input) {
    var file = input.files && input.files[0];
    if (!file) return;
    var n = input.getAttribute("data-upload-item");
    var bar = document.getElementById(input.id + "-progress");
    var status = document.getElementById(input.id + "-status");
    var shown = function (bytes) { bar.value = Math.round((bytes / file.size) * 100); };
    var id = key();
    pending++;
    bar.value = 0;
    bar.hidden = false;
    status.textContent = "Uploading " + file.name + "…";
    var useDirect = config.getAttribute("data-direct") === "1";
    (useDirect ? checksums(file).then(function (sums) { return direct(file, id, sums, shown); })
      : through(file, id, shown)).then(function (asset) {
      attach(n, asset);
      input.value = "";
      bar.value = 100;
      status.textContent = file.name + " is attached to item " + (Number(n) + 1) + ".";
    }).catch(function (error) {
      bar.hidden = true;
      status.textContent = "The upload of " + file.name + " failed: " + error.message;
    }).then(function () { pending--; });
  }
  form.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("input[type=file][data-upload-item]")) upload(event.target);
  });
  form.addEventListener("submit", function (event) {
    if (pending > 0) {
      event.preventDefault();
      window.alert("An upload is still running; send the form once it is attached.");
    }
  });
})();
`;
