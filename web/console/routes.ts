import type { PageRoute } from '../shared/router.svelte.js';

/** Every page of the console below `/console/` (`/signin` is the App's own). */
export const ROUTES: PageRoute[] = [
  { name: 'dashboard', pattern: '/', title: 'Dashboard', load: () => import('./pages/Dashboard.svelte') },
  { name: 'nodes', pattern: '/nodes', title: 'Nodes', load: () => import('./pages/Nodes.svelte') },
  { name: 'node', pattern: '/nodes/:id', title: 'Node', load: () => import('./pages/node/NodePage.svelte') },
  { name: 'node-tab', pattern: '/nodes/:id/:tab', title: 'Node', load: () => import('./pages/node/NodePage.svelte') },
  { name: 'dns', pattern: '/fleet/dns', title: 'DNS', load: () => import('./pages/fleet/Dns.svelte') },
  { name: 'enrollment', pattern: '/fleet/enrollment', title: 'Enrollment tokens', load: () => import('./pages/fleet/Enrollment.svelte') },
  { name: 'registrations', pattern: '/fleet/registrations', title: 'Registrations', load: () => import('./pages/fleet/Registrations.svelte') },
  { name: 'releases', pattern: '/fleet/releases', title: 'Agent releases', load: () => import('./pages/fleet/Releases.svelte') },
  { name: 'autopeering', pattern: '/fleet/autopeering', title: 'Autopeering', load: () => import('./pages/fleet/Autopeering.svelte') },
  { name: 'mitigations', pattern: '/fleet/mitigations', title: 'Mitigations', load: () => import('./pages/fleet/Mitigations.svelte') },
  { name: 'flaps', pattern: '/flaps', title: 'Prefix flaps', load: () => import('./pages/flaps/FlapsPage.svelte') },
  { name: 'flaps-tab', pattern: '/flaps/:tab', title: 'Flaps', load: () => import('./pages/flaps/FlapsPage.svelte') },
  { name: 'flap-peer', pattern: '/flaps/peers/:asn', title: 'Flap peer', load: () => import('./pages/flaps/FlapPeer.svelte') },
  { name: 'notifications', pattern: '/notifications', title: 'Notifications', load: () => import('./pages/notifications/Notifications.svelte') },
  { name: 'audit', pattern: '/audit', title: 'Audit', load: () => import('./pages/Audit.svelte') },
  { name: 'registry', pattern: '/registry', title: 'Registry', load: () => import('./pages/Registry.svelte') },
  { name: 'account', pattern: '/account', title: 'Account', load: () => import('./pages/Account.svelte') },
];

/** The navigation: groups of links (path, label). */
export const NAV: { group: string; links: { path: string; label: string }[] }[] = [
  {
    group: 'Network',
    links: [
      { path: '/', label: 'Dashboard' },
      { path: '/nodes', label: 'Nodes' },
      { path: '/flaps', label: 'Flaps' },
    ],
  },
  {
    group: 'Fleet',
    links: [
      { path: '/fleet/dns', label: 'DNS' },
      { path: '/fleet/enrollment', label: 'Enrollment' },
      { path: '/fleet/registrations', label: 'Registrations' },
      { path: '/fleet/releases', label: 'Releases' },
      { path: '/fleet/autopeering', label: 'Autopeering' },
      { path: '/fleet/mitigations', label: 'Mitigations' },
    ],
  },
  {
    group: 'Records',
    links: [
      { path: '/notifications', label: 'Notifications' },
      { path: '/audit', label: 'Audit' },
      { path: '/registry', label: 'Registry' },
    ],
  },
];
