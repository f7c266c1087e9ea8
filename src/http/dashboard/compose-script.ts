/**
 * The compose page's script (concatenated to the dashboard's, served by Herald, no build step):
 * progressive enhancement of a form that works without it.
 */
export const COMPOSE_JS = `
// Compose, enhanced: the preview and checks pane refreshed as the person types (a debounced POST of the
// form to the fragment route), each network's options shown as destinations are chosen, files dropped,
// pasted or chosen (several at once) uploaded with progress and attached with a thumbnail and an alt
// text field, media moved or detached and items added without a reload. Without it the form posts.
(function () {
  var form = document.querySelector("form.compose");
  var config = form && form.querySelector("[data-upload-start]");
  var pane = document.getElementById("compose-pane");
  if (!config || !pane || !window.XMLHttpRequest || !window.crypto || !window.Promise || !window.fetch) return;
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
  var notice = document.getElementById("compose-notice");
  function announce(text) {
    notice.hidden = false;
    notice.querySelector("p").textContent = text;
  }
  // The pane: one request at a time, the newest form wins; 400 ms after the last keystroke.
  var timer = null;
  var asked = 0;
  function formBody() {
    var body = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      if (typeof value === "string" && name !== "op") body.append(name, value);
    });
    return body;
  }
  function refresh() {
    var mine = ++asked;
    pane.setAttribute("aria-busy", "true");
    fetch(pane.getAttribute("data-refresh"), { method: "POST", body: formBody(), credentials: "same-origin",
      headers: { "content-type": "application/x-www-form-urlencoded" } })
      .then(function (answer) { return answer.ok ? answer.text() : Promise.reject(new Error(answer.status)); })
      .then(function (markup) {
        if (mine !== asked) return;
        var parsed = new DOMParser().parseFromString("<div>" + markup + "</div>", "text/html").body.firstChild;
        var slot = parsed.querySelector("[data-next-slot]");
        if (slot) {
          slot.remove();
          var queue = form.querySelector("input[name=when][value=queue]");
          var hint = queue && queue.parentNode.querySelector(".hint");
          if (hint) hint.textContent = slot.textContent;
        }
        parsed.querySelectorAll("[data-counters] [data-item]").forEach(function (c) {
          var counter = form.querySelector("[data-counter='" + c.getAttribute("data-item") + "']");
          if (!counter) return;
          counter.textContent = c.textContent;
          counter.classList.toggle("over", c.getAttribute("data-over") === "1");
        });
        var summary = pane.querySelector("#compose-pane-summary");
        var next = parsed.querySelector("#compose-pane-summary");
        // The summary is a live region: change its text (announced), replace everything else around it.
        Array.prototype.slice.call(pane.childNodes).forEach(function (node) { if (node !== summary) node.remove(); });
        Array.prototype.slice.call(parsed.childNodes).forEach(function (node) {
          if (node === next) pane.insertBefore(summary, null);
          else pane.appendChild(node);
        });
        if (summary && next && summary.textContent !== next.textContent) summary.textContent = next.textContent;
      })
      .catch(function () {})
      .then(function () { if (mine === asked) pane.removeAttribute("aria-busy"); });
  }
  function soon() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 400);
  }
  form.addEventListener("input", function (event) {
    if (event.target.type !== "file") soon();
  });
  // A network's options show while one of its destinations is chosen.
  function showNetworks() {
    var chosen = Array.prototype.map.call(form.querySelectorAll("input[name=destination_ids]:checked"),
      function (box) { return box.value; });
    form.querySelectorAll("fieldset.network-options").forEach(function (set) {
      var ids = set.getAttribute("data-destinations").split(" ");
      set.hidden = !ids.some(function (id) { return chosen.indexOf(id) >= 0; });
    });
  }
  form.querySelectorAll("[data-without-script]").forEach(function (p) { p.hidden = true; });
  form.addEventListener("change", function (event) {
    var target = event.target;
    if (target.name === "destination_ids") showNetworks();
    if (target.type !== "file") soon();
  });
  function element(tag, attributes, text) {
    var e = document.createElement(tag);
    Object.keys(attributes).forEach(function (name) { e.setAttribute(name, attributes[name]); });
    if (text) e.textContent = text;
    return e;
  }
  function hidden(text) { return element("span", { class: "visually-hidden" }, text); }
  function button(op, label, name, marker) {
    var b = element("button", { type: "submit", name: "op", value: op, class: "secondary" }, label);
    b.setAttribute(marker, "");
    b.append(hidden(" " + name));
    return b;
  }
  // Move buttons on every card but the first (the server draws them the same way).
  function renumber(list) {
    var n = list.id.replace(/^f-body-(\\d+)-attached$/, "$1");
    Array.prototype.forEach.call(list.children, function (card, position) {
      var move = card.querySelector("[data-move]");
      var name = card.querySelector(".media-name").textContent;
      if (position === 0 && move) move.remove();
      if (position > 0 && !move) {
        var actions = card.querySelector(".media-actions");
        actions.insertBefore(button("move:" + n + ":" + card.getAttribute("data-asset"), "Move earlier", name,
          "data-move"), actions.firstChild);
      }
    });
  }
  function altHint() {
    var any = form.querySelector(".media-card .field .hint");
    return any ? any.textContent : "Sent to every chosen network that takes alt text.";
  }
  function attach(n, asset) {
    var list = document.getElementById("f-body-" + n + "-attached");
    var name = asset.label + " (" + asset.content_type + (asset.dimensions ? ", " + asset.dimensions : "") + ")";
    var card = element("li", { class: "media-card", "data-asset": asset.id });
    card.append(element("input", { type: "hidden", name: "item_" + n + "_media", value: asset.id }));
    var image = asset.content_type.indexOf("image/") === 0;
    card.append(image
      ? element("img", { class: "thumb", alt: "", src: location.pathname.replace(/\\/posts\\/new$/, "") +
        "/assets/" + encodeURIComponent(asset.id) + "/thumbnail" })
      : element("span", { class: "thumb video", "aria-hidden": "true" }, "▶"));
    card.append(element("span", { class: "media-name" }, name));
    if (image) {
      var id = "f-alt-" + asset.id.replace(/[^A-Za-z0-9_]+/g, "-");
      var field = element("div", { class: "field" });
      field.append(element("label", { for: id }, "Alt text for " + name),
        element("p", { class: "hint", id: id + "-hint" }, altHint()),
        element("textarea", { id: id, name: "alt_" + asset.id, rows: "2", "aria-describedby": id + "-hint" }));
      card.append(field);
    }
    var actions = element("span", { class: "media-actions" });
    actions.append(button("detach:" + n + ":" + asset.id, "Detach", name, "data-detach"));
    card.append(actions);
    list.append(card);
    renumber(list);
  }
  var attachOrder = {};
  function upload(n, file, input) {
    var list = document.getElementById("f-body-" + n + "-file-uploads");
    var status = document.getElementById("f-body-" + n + "-file-status");
    var row = element("li", {}, "");
    var bar = element("progress", { max: "100", value: "0", "aria-label": "Uploading " + file.name });
    row.append(element("span", {}, file.name), bar);
    list.append(row);
    var shown = function (bytes) { bar.value = Math.round((bytes / Math.max(1, file.size)) * 100); };
    var id = key();
    pending++;
    status.textContent = "Uploading " + file.name + "…";
    var useDirect = config.getAttribute("data-direct") === "1";
    var sent = (useDirect ? checksums(file).then(function (sums) { return direct(file, id, sums, shown); })
      : through(file, id, shown));
    // Files upload side by side but attach in the order they were given.
    var settled = sent.then(function (asset) { return { asset: asset }; }, function (e) { return { error: e }; });
    var turn = (attachOrder[n] || Promise.resolve()).then(function () { return settled; });
    attachOrder[n] = turn;
    turn.then(function (result) {
      if (result.error) throw result.error;
      var asset = result.asset;
      attach(n, asset);
      row.remove();
      if (input) input.value = "";
      // Said once, in the page's notice (two live regions would announce it twice).
      status.textContent = "";
      announce(file.name + " is attached to item " + (Number(n) + 1) + ".");
      soon();
    }).catch(function (error) {
      row.remove();
      status.textContent = "The upload of " + file.name + " failed: " + error.message;
    }).then(function () { pending--; });
  }
  function uploadAll(n, files, input) {
    Array.prototype.forEach.call(files, function (file) { upload(n, file, input); });
  }
  form.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches && target.matches("input[type=file][data-upload-item]"))
      uploadAll(target.getAttribute("data-upload-item"), target.files, target);
  });
  // Drop files on an item, or paste them into its text.
  function itemOf(node) {
    var set = node.closest && node.closest("fieldset.compose-item");
    return set ? set.getAttribute("data-item") : null;
  }
  form.querySelectorAll("[data-drop]").forEach(function (zone) { zone.hidden = false; });
  form.addEventListener("dragover", function (event) {
    if (itemOf(event.target) === null) return;
    event.preventDefault();
    var zone = event.target.closest("fieldset.compose-item").querySelector("[data-drop]");
    if (zone) zone.classList.add("over");
  });
  form.addEventListener("dragleave", function (event) {
    var set = event.target.closest && event.target.closest("fieldset.compose-item");
    var zone = set && set.querySelector("[data-drop]");
    if (zone) zone.classList.remove("over");
  });
  form.addEventListener("drop", function (event) {
    var n = itemOf(event.target);
    if (n === null || !event.dataTransfer || event.dataTransfer.files.length === 0) return;
    event.preventDefault();
    var zone = event.target.closest("fieldset.compose-item").querySelector("[data-drop]");
    if (zone) zone.classList.remove("over");
    uploadAll(n, event.dataTransfer.files, null);
  });
  form.addEventListener("paste", function (event) {
    var n = itemOf(event.target);
    var files = event.clipboardData && event.clipboardData.files;
    if (n === null || !files || files.length === 0) return;
    event.preventDefault();
    uploadAll(n, files, null);
  });
  // Detach, move earlier and add an item in place; the server does the same without the script.
  form.addEventListener("click", function (event) {
    var b = event.target.closest && event.target.closest("button[name=op]");
    if (!b) return;
    var card = b.closest("li.media-card");
    if (card && b.hasAttribute("data-detach")) {
      event.preventDefault();
      var list = card.parentNode;
      var n = Number(itemOf(card));
      var name = card.querySelector(".media-name").textContent;
      card.remove();
      renumber(list);
      announce(name + " is detached from item " + (n + 1) + ".");
      (list.querySelector("button") || form.querySelector("#f-body-" + n + "-text")).focus();
      soon();
    } else if (card && b.hasAttribute("data-move")) {
      event.preventDefault();
      var parent = card.parentNode;
      parent.insertBefore(card, card.previousElementSibling);
      renumber(parent);
      var position = Array.prototype.indexOf.call(parent.children, card) + 1;
      announce(card.querySelector(".media-name").textContent + " is now media " + position + " of item " +
        (Number(itemOf(card)) + 1) + ".");
      (card.querySelector("[data-move]") || card.querySelector("[data-detach]")).focus();
      soon();
    } else if (b.value === "add") {
      event.preventDefault();
      addItem();
    }
  });
  function addItem() {
    var count = form.querySelector("input[name=item_count]");
    var n = Number(count.value);
    if (n >= 100) return;
    var sets = form.querySelectorAll("fieldset.compose-item");
    var copy = sets[0].cloneNode(true);
    var from = /item_0_|f-body-0-/g;
    copy.querySelectorAll("*").forEach(function (e) {
      Array.prototype.slice.call(e.attributes).forEach(function (a) {
        var value = a.value.replace(from, function (m) { return m.replace("0", String(n)); })
          .replace(/item 1\\b/g, "item " + (n + 1));
        if (value !== a.value) e.setAttribute(a.name, value);
      });
    });
    // Buttons' hidden words name their item ("Attach to item 1"): the copy's name its own.
    copy.querySelectorAll(".visually-hidden").forEach(function (e) {
      e.textContent = e.textContent.replace(/item 1\\b/g, "item " + (n + 1));
    });
    copy.setAttribute("data-item", String(n));
    copy.querySelectorAll("[data-upload-item]").forEach(function (e) { e.setAttribute("data-upload-item", String(n)); });
    copy.querySelectorAll("[data-drop]").forEach(function (e) { e.setAttribute("data-drop", String(n)); });
    copy.querySelectorAll("[data-counter]").forEach(function (e) {
      e.setAttribute("data-counter", String(n));
      e.textContent = "";
      e.classList.remove("over");
    });
    copy.querySelectorAll(".error").forEach(function (e) { e.remove(); });
    copy.querySelectorAll("[aria-invalid]").forEach(function (e) {
      e.removeAttribute("aria-invalid");
      e.setAttribute("aria-describedby", (e.getAttribute("aria-describedby") || "").replace(/\\S+-error/g, "").trim());
    });
    copy.querySelectorAll("ul.attached, ul.uploads").forEach(function (e) { e.textContent = ""; });
    copy.querySelectorAll("[role=status]").forEach(function (e) { e.textContent = ""; });
    copy.querySelectorAll("button[value^='remove:']").forEach(function (e) { e.remove(); });
    copy.querySelector("legend").textContent = "Item " + (n + 1) + " (reply)";
    var text = copy.querySelector("textarea");
    text.value = "";
    text.rows = 4;
    copy.querySelectorAll("select").forEach(function (s) { s.selectedIndex = 0; });
    copy.querySelectorAll("input[type=file]").forEach(function (f) { f.value = ""; });
    var remove = element("button", { type: "submit", name: "op", value: "remove:" + n, class: "secondary" },
      "Remove item " + (n + 1) + " (reply)");
    copy.append(remove);
    sets[sets.length - 1].after(copy);
    count.value = String(n + 1);
    announce("Item " + (n + 1) + " is added.");
    text.focus();
    soon();
  }
  form.addEventListener("submit", function (event) {
    if (pending > 0) {
      event.preventDefault();
      window.alert("An upload is still running; send the form once it is attached.");
    }
  });
})();
`;
