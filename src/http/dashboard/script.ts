/**
 * The dashboard's script, progressive enhancement only (every form works without it): copy buttons for
 * secrets shown once, a confirmation before forms marked `data-confirm`, and compose's uploads with
 * progress straight to the API's part URLs.
 */
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
    return Array.prototype.map
      .call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); })
      .join("");
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
      var local = upload.parts.every(function (p) {
        return new URL(p.upload_url, location.href).origin === location.origin;
      });
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
    var target = event.target;
    if (target.matches && target.matches("input[type=file][data-upload-item]")) upload(target);
  });
  form.addEventListener("submit", function (event) {
    if (pending > 0) {
      event.preventDefault();
      window.alert("An upload is still running; send the form once it is attached.");
    }
  });
})();
`;
