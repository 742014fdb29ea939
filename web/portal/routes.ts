import type { PageRoute } from '../shared/router.svelte.js';

/** Every page of the portal below `/portal/` (`/login` and `/auth/complete` are the App's own, no session needed). */
export const ROUTES: PageRoute[] = [
  { name: 'network', pattern: '/', title: 'Our network', load: () => import('./pages/Network.svelte') },
  { name: 'new', pattern: '/peerings/new', title: 'New peering', load: () => import('./pages/NewPeering.svelte') },
  { name: 'peerings', pattern: '/peerings', title: 'My peerings', load: () => import('./pages/Peerings.svelte') },
  { name: 'peering', pattern: '/peerings/:id', title: 'Peering', load: () => import('./pages/Peering.svelte') },
  { name: 'flaps', pattern: '/flaps', title: 'My flaps', load: () => import('./pages/Flaps.svelte') },
  { name: 'notifications', pattern: '/notifications', title: 'Notifications', load: () => import('./pages/notifications/Notifications.svelte') },
  { name: 'profile', pattern: '/profile', title: 'Profile', load: () => import('./pages/Profile.svelte') },
];

/** The navigation (path, label). */
export const NAV: { path: string; label: string }[] = [
  { path: '/', label: 'Our network' },
  { path: '/peerings/new', label: 'New peering' },
  { path: '/peerings', label: 'My peerings' },
  { path: '/flaps', label: 'My flaps' },
  { path: '/notifications', label: 'Notifications' },
  { path: '/profile', label: 'Profile' },
];
