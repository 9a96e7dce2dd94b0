/* The review queue's rubric by keyboard. The form's rows are the aesthetic rating (row 0) and the
   ladder's criteria; [ and ] move between them. On a criterion's row: 0-9 set a number and + / -
   step it, 1-9 pick a category's label, y / n answer a yes/no question; on the rating's row the
   queue's own keys apply (1-5 rate). Keys typed into a field stay the field's. Runs before the
   queue's own handler (capture), which it leaves every key it does not use. */
(() => {
  const typing = (el) => el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
    (el.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(el.type)));
  const rows = () => [...document.querySelectorAll("#review .form-row[data-row]")];
  let active = 0;

  function select(index) {
    const all = rows();
    if (all.length < 2) return;
    active = (index + all.length) % all.length;
    all.forEach((row, i) => row.classList.toggle("active-row", i === active));
    const row = all[active];
    row.scrollIntoView({ block: "nearest" });
    const status = document.getElementById("row-status");
    if (status) status.textContent = `${row.querySelector("legend")?.textContent.trim() ?? ""}`;
  }

  function decimals(x) { const s = String(x); return s.includes(".") ? s.split(".")[1].length : 0; }

  function setNumber(row, value) {
    const input = row.querySelector("input[type=number]");
    const min = Number(row.dataset.min), max = Number(row.dataset.max), step = Number(row.dataset.step);
    if (!input || value < min || value > max) return false;
    const places = Math.max(decimals(min), decimals(step));
    const onStep = Math.abs((value - min) / step - Math.round((value - min) / step)) < 1e-9;
    if (!onStep) return false;
    input.value = value.toFixed(places);
    return true;
  }

  function stepNumber(row, direction) {
    const input = row.querySelector("input[type=number]");
    const min = Number(row.dataset.min), max = Number(row.dataset.max), step = Number(row.dataset.step);
    if (!input) return;
    const now = input.value === "" ? (direction > 0 ? min - step : max + step) : Number(input.value);
    setNumber(row, Math.min(max, Math.max(min, now + direction * step)));
  }

  function check(id) {
    const radio = document.getElementById(id);
    if (radio) { radio.checked = true; return true; }
    return false;
  }

  function onRow(row, key) {
    const kind = row.dataset.kind;
    const name = row.id.replace(/^criterion-/, "");
    if (kind === "number") {
      if (/^[0-9]$/.test(key)) { setNumber(row, Number(key)); return true; }
      if (key === "+" || key === "=") { stepNumber(row, 1); return true; }
      if (key === "-") { stepNumber(row, -1); return true; }
    } else if (kind === "category") {
      if (/^[1-9]$/.test(key)) { check(`value-${name}-${key}`); return true; }
    } else if (kind === "boolean") {
      if (key === "y") { check(`value-${name}-yes`); return true; }
      if (key === "n") { check(`value-${name}-no`); return true; }
    }
    return false;
  }

  window.addEventListener("keydown", (event) => {
    const form = document.getElementById("review");
    if (!form || rows().length < 2) return;
    if (event.altKey || event.metaKey || event.ctrlKey || typing(event.target)) return;
    let used = false;
    if (event.key === "]") { select(active + 1); used = true; }
    else if (event.key === "[") { select(active - 1); used = true; }
    else if (active > 0) { used = onRow(rows()[active], event.key); }
    if (used) { event.preventDefault(); event.stopImmediatePropagation(); }
  }, true);

  document.addEventListener("focusin", (event) => {
    const row = event.target.closest?.("#review .form-row[data-row]");
    if (row) select(rows().indexOf(row));
  });
})();
