import { mount } from 'svelte';
import '../shared/base.css';
import './portal.css';
import { startRouter } from '../shared/router.svelte.js';
import { applyTheme } from '../shared/theme.js';
import App from './App.svelte';

applyTheme();
startRouter();
mount(App, { target: document.getElementById('app')! });
