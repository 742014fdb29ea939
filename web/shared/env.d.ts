/// <reference types="svelte" />
/// <reference types="vite/client" />

declare module 'svelte/elements' {
  interface SvelteHTMLElements {
    'fleet-map': HTMLAttributes<HTMLElement> & { 'fleet-src'?: string; 'world-src'?: string };
  }
}

export {};
