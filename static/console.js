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

  // The open panel's address: the one it was opened with, or, opened with the page
  // (?slot=…), made from its slot and the grid's.
  function openUrl() {
    const aside = panel();
    if (!aside || aside.hidden) return null;
    if (aside.dataset.url) return aside.dataset.url;
    const slot = aside.querySelector(".panel-inner")?.dataset.slot;
    const grid = document.querySelector("table.grid[data-slot-url]");
    if (!slot || !grid) return null;
    const [index, rung] = slot.split("/");
    return grid.dataset.slotUrl.replace("/slots/0/RUNG/", `/slots/${index}/${encodeURIComponent(rung)}/`);
  }

  // The panel is part of the live board: when a refresh found the board changed, it is read
  // again, keeping its place (the focus stays where it was unless it was inside it).
  document.body.addEventListener("board-changed", () => {
    const url = openUrl();
    if (!url || !window.htmx) return;
    const aside = panel();
    const top = aside.scrollTop;
    htmx.ajax("GET", url, { target: "#slot-panel", swap: "innerHTML" }).then(() => {
      aside.scrollTop = top;
    });
  });

  function open(td) {
    const target = slotUrl(td);
    const aside = panel();
    if (!target || !aside || !window.htmx) return;
    opener = td.id;
    htmx.ajax("GET", target.url, { target: "#slot-panel", swap: "innerHTML" }).then(() => {
      aside.dataset.url = target.url;
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
    delete aside.dataset.url;
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

/* The review queue by keyboard: 1-5 rate, j/k next/previous, Enter submits (Ctrl+Enter in the
   writeup), s skips, w writes, ? lists the shortcuts. Keys typed into a field stay the field's. */
(() => {
  const typing = (el) => el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
    (el.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(el.type)));

  function toggleHelp(show) {
    const help = document.getElementById("shortcuts");
    const button = document.getElementById("shortcuts-button");
    if (!help) return;
    const open = show ?? help.hidden;
    help.hidden = !open;
    button?.setAttribute("aria-expanded", String(open));
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest("#shortcuts-button")) toggleHelp();
  });

  document.addEventListener("keydown", (event) => {
    const form = document.getElementById("review");
    if (!document.getElementById("review-queue") && !document.getElementById("shortcuts")) return;
    if (event.altKey || event.metaKey) return;
    const target = event.target;
    if (event.key === "Enter" && event.ctrlKey && form && target.tagName === "TEXTAREA") {
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    if (event.ctrlKey || typing(target)) return;
    const go = (id) => { const link = document.getElementById(id); if (link) window.location.href = link.href; };
    if (event.key === "?") { event.preventDefault(); toggleHelp(); return; }
    if (event.key === "Escape") { toggleHelp(false); return; }
    if (!form) return;
    if (/^[1-5]$/.test(event.key)) {
      const radio = document.getElementById(`rating-${event.key}`);
      if (radio) { radio.checked = true; radio.focus(); event.preventDefault(); }
    } else if (event.key === "j") { go("next-run"); }
    else if (event.key === "k") { go("previous-run"); }
    else if (event.key === "s") { go("skip-run"); }
    else if (event.key === "w") { event.preventDefault(); document.getElementById("writeup")?.focus(); }
    else if (event.key === "Enter" && !target.closest("a, button")) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
})();

/* Messages on a board describe the state it had when they were written ("Run started…"): once
   the board's own refreshes show another status, they are gone. */
(() => {
  function dropStale() {
    const head = document.getElementById("board-head");
    const box = document.querySelector(".messages[data-board-status]");
    if (head && box && head.dataset.status && head.dataset.status !== box.dataset.boardStatus) {
      box.remove();
    }
  }
  document.addEventListener("htmx:afterSettle", dropStale);
  document.addEventListener("htmx:oobAfterSwap", dropStale);
})();
