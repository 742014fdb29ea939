import { pgpSignCommand, sshSignCommand } from './commands.js';
import { h } from './dom.js';
import type { Model, Screen } from './flow.js';
import type { VerificationOption } from './types.js';
import { button, ERROR_ID, fieldState, retryButton, section, submitButton, type Dispatch } from './view-parts.js';

/** How an option reads in the list: what will happen, then whose it is. */
export function optionLabel(option: VerificationOption): { title: string; detail: string } {
  const who = option.comment ? `${option.mntner} · ${option.comment}` : option.mntner;
  switch (option.kind) {
    case 'email':
      return { title: `E-mail a code to ${option.value}`, detail: who };
    case 'ssh': {
      const [type = option.method, key = ''] = option.value.split(/\s+/);
      return { title: `Sign with the SSH key ${type} …${key.slice(-12)}`, detail: who };
    }
    case 'pgp':
      return { title: `Sign with the PGP key …${option.value.slice(-16)}`, detail: who };
    default: {
      const _never: never = option.kind;
      return _never;
    }
  }
}

export function methodsScreen(model: Model, dispatch: Dispatch): HTMLElement {
  const view = model.options;
  const options = view?.options ?? [];
  return section(
    model,
    `Verify ${view?.display_name ?? `AS${model.asn}`}`,
    options.length === 0
      ? h('p', {}, 'The registry lists no way to verify this AS: its maintainers have no e-mail address, PGP key or SSH key on record.')
      : h('p', { id: 'methods-label' }, 'Choose how to prove that you control it:'),
    h(
      'ul',
      { class: 'methods', 'aria-labelledby': 'methods-label' },
      ...options.map((option, i) => {
        const label = optionLabel(option);
        return h(
          'li',
          {},
          h(
            'button',
            {
              type: 'button',
              id: `option-${option.id}`,
              class: 'method',
              disabled: !!model.busy,
              'data-focus': i === 0,
              onclick: () => dispatch({ type: 'optionChosen', optionId: option.id, at: Date.now() }),
            },
            h('span', { class: 'method-title' }, label.title),
            h('span', { class: 'method-detail' }, label.detail),
          ),
        );
      }),
    ),
    retryButton(model, dispatch),
    h(
      'p',
      { class: 'actions' },
      // A passkey this browser never used for the AS (a new browser, one synced from elsewhere, a phone nearby): asked for only on request.
      model.passkeys && button(model, 'Use a passkey', () => dispatch({ type: 'tryPasskey' })),
      button(model, 'Change AS number', () => dispatch({ type: 'changeAsn' })),
    ),
  );
}

type AnswerScreen = Extract<Screen, { name: 'answer' }>;

export function answerScreen(model: Model, screen: AnswerScreen, dispatch: Dispatch): HTMLElement {
  const { challenge } = screen;
  const until = new Date(challenge.expires_at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  // A wrong answer (400) is about what was pasted; so is a 422, except the PGP key found nowhere (the key field then opens).
  const state = fieldState(model, 'answer-hint', challenge.method === 'pgp' ? [400] : [400, 422]);
  const submit = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | HTMLTextAreaElement | null)?.value;
    dispatch({ type: 'answerSubmitted', answer: value('answer') ?? '', publicKey: value('public_key') });
  };
  const answerField =
    challenge.method === 'email'
      ? [
          h('label', { for: 'answer' }, 'Code'),
          h('input', {
            id: 'answer',
            name: 'answer',
            type: 'text',
            inputmode: 'numeric',
            autocomplete: 'one-time-code',
            value: model.draft?.answer ?? '',
            ...state,
            'data-focus': true,
          }),
        ]
      : [
          h('label', { for: 'answer' }, challenge.method === 'ssh' ? 'Signature' : 'Signed message'),
          h(
            'textarea',
            { id: 'answer', name: 'answer', rows: 9, spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off', ...state },
            model.draft?.answer ?? '',
          ),
        ];
  return section(
    model,
    titleOf(challenge.method),
    ...howTo(screen),
    challenge.method === 'email'
      ? h('p', { class: 'hint' }, 'A new code can be sent a minute after the last one; only the newest code counts.')
      : h('p', { class: 'hint' }, `Valid until ${until}.`),
    h(
      'form',
      { onsubmit: submit },
      ...answerField,
      challenge.method === 'pgp' ? publicKeyField(model, screen.needsPublicKey) : null,
      h('div', { class: 'actions' }, submitButton(model, 'Verify'), challenge.method === 'email' ? resendButton(model, screen, dispatch) : null),
    ),
    retryButton(model, dispatch),
    h(
      'p',
      {},
      button(model, 'Choose another method', () => dispatch({ type: 'otherMethod' })),
    ),
  );
}

function titleOf(method: VerificationOption['kind']): string {
  return method === 'email' ? 'Enter the code from the e-mail' : method === 'ssh' ? 'Sign with your SSH key' : 'Sign with your PGP key';
}

/** The instructions: the exact command for a signature, the service's own text for a code. */
function howTo(screen: AnswerScreen): Node[] {
  const { challenge, option } = screen;
  if (challenge.method === 'email') return [h('p', { id: 'answer-hint' }, challenge.instructions)];
  const nonce = challenge.nonce ?? '';
  const command = challenge.method === 'ssh' ? sshSignCommand(nonce, option.value.split(/\s+/)[0] ?? option.method) : pgpSignCommand(nonce, option.value);
  const what =
    challenge.method === 'ssh'
      ? `Run this command where the SSH key registered on ${option.mntner} is (change the key file after -f if yours is elsewhere), then paste the signature it prints, from -----BEGIN SSH SIGNATURE----- to -----END SSH SIGNATURE-----.`
      : `Run this command where the PGP key registered on ${option.mntner} is, then paste the whole signed message it prints.`;
  return [h('p', { id: 'answer-hint' }, what), commandBlock(command), h('p', { class: 'hint' }, 'The text to sign: ', h('code', { id: 'nonce' }, nonce))];
}

/**
 * The command on one line that never breaks (a break at a hyphen reads as
 * another command when retyped; on a narrow screen it scrolls sideways, by
 * keyboard too), and a Copy button that copies exactly it.
 */
function commandBlock(command: string): Node {
  const code = h('code', { id: 'command' }, command);
  const status = h('span', { id: 'command-copied', class: 'hint', role: 'status' });
  const copy = () => {
    const copied = navigator.clipboard?.writeText(command);
    if (!copied) return selectCommand(code, status);
    copied.then(
      () => (status.textContent = 'Copied to the clipboard.'),
      () => selectCommand(code, status),
    );
  };
  return h(
    'div',
    { class: 'command-block' },
    h('pre', { class: 'command', tabindex: 0, role: 'region', 'aria-label': 'Command to run' }, code),
    h(
      'p',
      { class: 'command-actions' },
      h('button', { type: 'button', id: 'button-copy-command', class: 'secondary', onclick: copy }, 'Copy the command'),
      status,
    ),
  );
}

/** Without clipboard access (a browser that refuses it): the command selected, to copy by hand. */
function selectCommand(code: HTMLElement, status: HTMLElement): void {
  getSelection()?.selectAllChildren(code);
  status.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
}

function publicKeyField(model: Model, open: boolean): HTMLElement {
  return h(
    'details',
    { open },
    h('summary', {}, 'The service cannot find my public key'),
    h('label', { for: 'public_key' }, 'Public key (ASCII armored)'),
    h('p', { id: 'public_key-hint', class: 'hint' }, 'The output of gpg --armor --export with the registered fingerprint.'),
    h(
      'textarea',
      {
        id: 'public_key',
        name: 'public_key',
        rows: 6,
        spellcheck: 'false',
        autocapitalize: 'off',
        autocomplete: 'off',
        'aria-describedby': open && model.error?.status === 422 ? `public_key-hint ${ERROR_ID}` : 'public_key-hint',
      },
      model.draft?.publicKey ?? '',
    ),
  );
}

/**
 * "Send a new code", off until the cooldown the service named has passed,
 * counted from when the challenge arrived (a later render, after a wrong code
 * say, does not start the wait again).
 */
function resendButton(model: Model, screen: AnswerScreen, dispatch: Dispatch): HTMLButtonElement {
  const wait = Math.ceil((screen.resendAt - Date.now()) / 1000);
  const el = button(model, 'Send a new code', () => dispatch({ type: 'resend', at: Date.now() }));
  if (wait > 0 && !model.busy) {
    el.disabled = true;
    el.title = `Available in ${wait} seconds`;
    setTimeout(() => {
      el.disabled = false;
      el.removeAttribute('title');
    }, screen.resendAt - Date.now());
  }
  return el;
}
