import type { Component } from 'svelte';

/**
 * Every page of the portal: its path below `/portal/`, its title and its module
 * (loaded when first visited). A page component takes `params` (the path's `:names`).
 * `/login` and `/auth/complete` are the App's own (no session needed).
 */
export interface PageRoute {
  name: string;
  pattern: string;
  title: string;
  load: () => Promise<{ default: Component<{ params: Record<string, string> }> }>;
}

export const ROUTES: PageRoute[] = [
  { name: 'network', pattern: '/', title: 'Our network', load: () => import('./pages/Network.svelte') },
  { name: 'new', pattern: '/peerings/new', title: 'New peering', load: () => import('./pages/NewPeering.svelte') },
  { name: 'peerings', pattern: '/peerings', title: 'My peerings', load: () => import('./pages/Peerings.svelte') },
  { name: 'peering', pattern: '/peerings/:id', title: 'Peering', load: () => import('./pages/Peering.svelte') },
  { name: 'flaps', pattern: '/flaps', title: 'My flaps', load: () => import('./pages/Flaps.svelte') },
  { name: 'profile', pattern: '/profile', title: 'Profile', load: () => import('./pages/Profile.svelte') },
];

/** The navigation (path, label). */
export const NAV: { path: string; label: string }[] = [
  { path: '/', label: 'Our network' },
  { path: '/peerings/new', label: 'New peering' },
  { path: '/peerings', label: 'My peerings' },
  { path: '/flaps', label: 'My flaps' },
  { path: '/profile', label: 'Profile' },
];
