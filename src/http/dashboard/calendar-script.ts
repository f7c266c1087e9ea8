/**
 * The calendar's part of the dashboard script (served after script.ts): a scheduled post can be
 * dragged to another day or to a free slot. A drop fills in the post's own Move form (the day, and the
 * slot's time or none) and sends it, so the move is the same CSRF-checked form a person without the
 * script, or with a keyboard, uses.
 */
export const CALENDAR_JS = `
(function () {
  var week = document.querySelector("[data-calendar]");
  if (!week) return;
  var dragged = null;
  week.querySelectorAll("li[data-post]").forEach(function (item) {
    item.draggable = true;
    // The whole entry is dragged, not its link's address.
    item.querySelectorAll("a").forEach(function (a) { a.draggable = false; });
    // While its Move form is open the entry stays put, so the mouse can work in the form's fields.
    var details = item.querySelector("details");
    if (details) details.addEventListener("toggle", function () { item.draggable = !details.open; });
  });
  function targetOf(event) {
    var el = event.target.closest ? event.target : event.target.parentElement;
    if (!el) return null;
    return el.closest(".slot[data-time]") || el.closest("[data-date]");
  }
  function unmark() {
    week.querySelectorAll(".drop-target").forEach(function (el) { el.classList.remove("drop-target"); });
  }
  week.addEventListener("dragstart", function (event) {
    var item = event.target.closest && event.target.closest("li[data-post]");
    if (!item) return;
    dragged = item;
    item.classList.add("dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", item.getAttribute("data-post"));
  });
  week.addEventListener("dragover", function (event) {
    var target = dragged && targetOf(event);
    if (!target) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    if (!target.classList.contains("drop-target")) {
      unmark();
      target.classList.add("drop-target");
    }
  });
  week.addEventListener("dragleave", function (event) {
    if (event.target.classList && event.target === event.currentTarget) unmark();
  });
  week.addEventListener("dragend", function () {
    unmark();
    if (dragged) dragged.classList.remove("dragging");
    dragged = null;
  });
  week.addEventListener("drop", function (event) {
    var target = dragged && targetOf(event);
    if (!target) return;
    event.preventDefault();
    var item = dragged;
    unmark();
    var day = target.closest("[data-date]");
    var form = item.querySelector("form.move");
    if (!day || !form) return;
    var slot = target.matches(".slot[data-time]") ? target.getAttribute("data-time") : "";
    var from = item.closest("[data-date]");
    // Dropped back where it was: nothing to move.
    if (!slot && from === day) return;
    form.elements.local_date.value = day.getAttribute("data-date");
    form.elements.local_time.value = slot;
    item.classList.add("moving");
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
  });
})();
`;
