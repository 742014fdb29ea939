/**
 * Shapes of the identity API the page reads (document 1, Resources): the
 * server's own view types (`domain/identity/views.ts`), so the page cannot drift from what the service
 * sends. Type-only re-exports (`verbatimModuleSyntax` refuses any other form
 * for a type), which esbuild erases: nothing of the server modules is bundled.
 */

export type {
  ChallengeView as Challenge,
  SessionGrant,
  OptionView as VerificationOption,
  OptionsView as VerificationOptions,
} from '../../domain/identity/views.js';

/** A WebAuthn ceremony of `login/begin` or `register/begin`, its options handed to the browser's JSON parsers as they are. */
export interface Ceremony {
  ceremony_id: string;
  options: Record<string, unknown>;
}
