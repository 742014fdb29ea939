import { h } from './dom.js';
import type { Model } from './flow.js';
import { button, buttonId, ERROR_ID, fieldState, HEADING_ID, retryButton, section, submitButton, type Dispatch } from './view-parts.js';
import { answerScreen, methodsScreen } from './view-verify.js';

/** The screen of a model: a fresh subtree each time; the runner moves focus afterwards. */
export function screenOf(model: Model, dispatch: Dispatch): Node {
  switch (model.screen.name) {
    case 'loading':
      return section(model, 'Authorize access', model.error ? retryButton(model, dispatch) : h('p', {}, 'Loading the authorization request…'));
    case 'fatal':
      return fatalScreen(model.screen.detail, model.screen.explanation);
    case 'asn':
      return asnScreen(model, dispatch);
    case 'passkey':
      return passkeyScreen(model, dispatch);
    case 'methods':
      return methodsScreen(model, dispatch);
    case 'answer':
      return answerScreen(model, model.screen, dispatch);
    case 'enrol':
      return enrolScreen(model, dispatch);
    case 'consent':
      return consentScreen(model, dispatch);
    case 'leaving':
      return section(
        model,
        model.screen.detail ? 'The request could not be completed' : 'Returning to the application',
        model.screen.detail ? h('p', {}, model.screen.detail) : null,
        h('p', {}, 'You are being sent back to the application…'),
      );
    default: {
      const _never: never = model.screen;
      return _never;
    }
  }
}

const REFUSED_REQUEST =
  'The application sent a request this service does not accept for it. Close this page and start again from the application; if it keeps happening, tell its operator.';

function fatalScreen(detail: string, explanation = REFUSED_REQUEST): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': HEADING_ID, class: 'fatal' },
    h('h1', { id: HEADING_ID, tabindex: -1 }, 'This sign-in request cannot continue'),
    h('div', { id: ERROR_ID, class: 'error', role: 'alert', tabindex: -1 }, h('p', {}, detail)),
    h('p', {}, explanation),
  );
}

/** Answers of verification-options that refuse the AS number itself: not in the registry (404), invalid (422). */
const ASN_REFUSED = [404, 422];

function asnScreen(model: Model, dispatch: Dispatch): HTMLElement {
  const client = model.context?.client.name ?? 'the application';
  return section(
    model,
    `Sign in to ${client}`,
    h('p', {}, 'Prove that you control an autonomous system in the dn42 registry.'),
    h(
      'form',
      {
        novalidate: true,
        onsubmit: (e) => (
          e.preventDefault(),
          dispatch({ type: 'asnEntered', text: ((e.currentTarget as HTMLFormElement).elements.namedItem('asn') as HTMLInputElement).value })
        ),
      },
      h('label', { for: 'asn' }, 'AS number'),
      h('input', {
        id: 'asn',
        name: 'asn',
        type: 'text',
        inputmode: 'text',
        autocomplete: 'off',
        spellcheck: 'false',
        required: true,
        value: model.asnText ?? '',
        ...fieldState(model, 'asn-hint', ASN_REFUSED),
        'data-focus': true,
      }),
      h('p', { id: 'asn-hint', class: 'hint' }, 'For example 4242420000 or AS4242420000.'),
      submitButton(model, 'Continue'),
    ),
    retryButton(model, dispatch),
  );
}

function passkeyScreen(model: Model, dispatch: Dispatch): HTMLElement {
  return section(
    model,
    `Log in to AS${model.asn}`,
    h('p', {}, 'A passkey is registered for this AS. Use it to log in, or verify another way.'),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          id: buttonId('Use passkey'),
          class: 'primary',
          disabled: !!model.busy,
          'data-focus': true,
          onclick: () => dispatch({ type: 'usePasskey' }),
        },
        'Use passkey',
      ),
      button(model, 'Use another method', () => dispatch({ type: 'useOtherMethod' })),
      button(model, 'Change AS number', () => dispatch({ type: 'changeAsn' })),
    ),
    retryButton(model, dispatch),
  );
}

function enrolScreen(model: Model, dispatch: Dispatch): HTMLElement {
  return section(
    model,
    'Save a passkey?',
    h('p', {}, `Verified: AS${model.grant?.asn} (${model.grant?.mntner}). Next time you can log in with a passkey instead of a signature or code.`),
    h(
      'form',
      {
        onsubmit: (e) => (
          e.preventDefault(),
          dispatch({ type: 'enrol', label: ((e.currentTarget as HTMLFormElement).elements.namedItem('label') as HTMLInputElement).value })
        ),
      },
      h('label', { for: 'label' }, 'Name for this passkey (optional)'),
      h('input', { id: 'label', name: 'label', type: 'text', maxlength: 100, autocomplete: 'off' }),
      h(
        'div',
        { class: 'actions' },
        submitButton(model, 'Save passkey'),
        button(model, 'Not now', () => dispatch({ type: 'skipEnrol' })),
      ),
    ),
    retryButton(model, dispatch),
  );
}

function consentScreen(model: Model, dispatch: Dispatch): HTMLElement {
  const client = model.context?.client.name ?? 'The application';
  return section(
    model,
    `Allow ${client} to sign you in?`,
    h('p', {}, 'Signed in as ', h('strong', {}, `AS${model.grant?.asn}`), ` (${model.grant?.mntner}).`),
    h('p', { id: 'scopes-label' }, `${client} asks for:`),
    h(
      'ul',
      { class: 'scopes', 'aria-labelledby': 'scopes-label' },
      ...(model.context?.scopes ?? []).map((s) => h('li', {}, h('span', { class: 'scope-id' }, s.id), ' ', s.description)),
    ),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          id: buttonId('Allow'),
          class: 'primary',
          disabled: !!model.busy,
          'data-focus': true,
          onclick: () => dispatch({ type: 'decide', deny: false }),
        },
        'Allow',
      ),
      button(model, 'Deny', () => dispatch({ type: 'decide', deny: true })),
    ),
    retryButton(model, dispatch),
  );
}
