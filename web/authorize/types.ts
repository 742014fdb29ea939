/**
 * Shapes of the identity API the page reads (document 1, Resources): the
 * server's own view types (`domain/identity/views.ts`), so the page cannot drift from what the service
 * sends. Type-only re-exports (`verbatimModuleSyntax` refuses any other form
 * for a type), which esbuild erases: nothing of the server modules is bundled.
 */

export type { AuthorizeContextView as AuthorizeContext, CaptchaKind } from '../../domain/identity/authorize-context.js';
export type {
  CeremonyView as Ceremony,
  ChallengeView as Challenge,
  SessionGrant,
  OptionView as VerificationOption,
  OptionsView as VerificationOptions,
} from '../../domain/identity/views.js';
