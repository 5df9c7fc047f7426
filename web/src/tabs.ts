// ARIA tabs: click or arrow keys (Left/Right/Home/End) switch views.
export function setupTabs(list: HTMLElement, onSelect: (id: string) => void): (id: string) => void {
  const tabs = [...list.querySelectorAll<HTMLButtonElement>("[role=tab]")];
  const select = (id: string, focus = false) => {
    for (const tab of tabs) {
      const on = tab.id === id;
      tab.setAttribute("aria-selected", String(on));
      tab.tabIndex = on ? 0 : -1;
      const panel = document.getElementById(tab.getAttribute("aria-controls") ?? "");
      if (panel) panel.hidden = !on;
      if (on && focus) tab.focus();
    }
    onSelect(id);
  };
  list.addEventListener("click", (e) => {
    const tab = (e.target as HTMLElement).closest<HTMLButtonElement>("[role=tab]");
    if (tab) select(tab.id);
  });
  list.addEventListener("keydown", (e) => {
    const i = tabs.findIndex((t) => t.getAttribute("aria-selected") === "true");
    const next = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : e.key === "Home" ? 0 : e.key === "End" ? tabs.length - 1 : null;
    if (next === null) return;
    e.preventDefault();
    select(tabs[(next + tabs.length) % tabs.length].id, true);
  });
  return (id) => select(id);
}
