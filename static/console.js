/* The board's side panel: a click on a rung slot, or Enter on a focused one, opens the slot's
   runs and jobs beside the board, which keeps refreshing beneath it. Escape or the close button
   closes it and gives the focus back to the slot. */
(() => {
  let opener = null;

  function panel() { return document.getElementById("slot-panel"); }

  function slotUrl(td) {
    const grid = td.closest("table.grid");
    const row = td.closest("tr");
    if (!grid || !row || !row.id.startsWith("climber-row-")) return null;
    const heads = grid.querySelectorAll("thead th[data-rung]");
    const head = heads[td.cellIndex - 1];
    if (!head) return null;
    const index = row.id.slice("climber-row-".length);
    const rung = head.dataset.rung;
    return {
      url: grid.dataset.slotUrl.replace("/slots/0/RUNG/", `/slots/${index}/${encodeURIComponent(rung)}/`),
      slot: `${index}/${rung}`,
    };
  }

  function open(td) {
    const target = slotUrl(td);
    const aside = panel();
    if (!target || !aside || !window.htmx) return;
    opener = td.id;
    htmx.ajax("GET", target.url, { target: "#slot-panel", swap: "innerHTML" }).then(() => {
      aside.hidden = false;
      document.getElementById("board-layout")?.classList.add("has-panel");
      const url = new URL(window.location.href);
      url.searchParams.set("slot", target.slot);
      history.replaceState(null, "", url);
      document.getElementById("slot-panel-title")?.focus();
    });
  }

  function close() {
    const aside = panel();
    if (!aside || aside.hidden) return;
    aside.hidden = true;
    aside.innerHTML = "";
    document.getElementById("board-layout")?.classList.remove("has-panel");
    const url = new URL(window.location.href);
    url.searchParams.delete("slot");
    history.replaceState(null, "", url);
    if (opener) document.getElementById(opener)?.focus();
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest("#slot-panel-close")) { close(); return; }
    const td = event.target.closest("table.grid td.slot");
    if (td) open(td);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && panel() && !panel().hidden) { close(); return; }
    if (event.key === "Enter" && event.target.matches?.("table.grid td.slot")) {
      event.preventDefault();
      open(event.target);
    }
  });
})();
