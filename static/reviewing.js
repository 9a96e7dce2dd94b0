/* A blind pairwise session by keyboard: a, b and t press A is better, B is better and Tie.
   Keys typed into a field stay the field's; "?" (the review queue's script) lists them. */
(() => {
  const typing = (el) => el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
    (el.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(el.type)));
  const keys = { a: "choose-left", b: "choose-right", t: "choose-tie" };
  document.addEventListener("keydown", (event) => {
    if (!document.getElementById("judge")) return;
    if (event.altKey || event.metaKey || event.ctrlKey || typing(event.target)) return;
    const id = keys[event.key.toLowerCase()];
    const button = id && document.getElementById(id);
    if (!button || button.disabled) return;
    event.preventDefault();
    document.querySelectorAll("#judge button[type=submit]").forEach((b) => { b.disabled = true; });
    button.disabled = false;
    button.click();
  });
})();
