/** Light, dark, or the system's choice; kept per browser (localStorage), applied as `data-theme` on `<html>`. */
export type ThemeChoice = 'auto' | 'light' | 'dark';
const KEY = 'dn42.theme';

export function storedTheme(): ThemeChoice {
  const v = localStorage.getItem(KEY);
  return v === 'light' || v === 'dark' ? v : 'auto';
}

export function applyTheme(choice: ThemeChoice = storedTheme()): void {
  if (choice === 'auto') {
    localStorage.removeItem(KEY);
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem(KEY, choice);
    document.documentElement.dataset.theme = choice;
  }
}

/** Whether the page is dark now (the choice, or the system's when `auto`). */
export function isDark(): boolean {
  const t = document.documentElement.dataset.theme;
  return t ? t === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
}
