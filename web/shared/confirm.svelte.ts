/**
 * Asking before a destructive action: `await ask({...})` opens the app's one
 * confirmation dialog (`ConfirmHost`) saying what will happen, and resolves true
 * only on the explicit confirm button (Escape and Cancel resolve false).
 */
export interface Question {
  title: string;
  /** What the action will do, in words (a sentence or a short list). */
  body: string | string[];
  /** The confirm button's label: the action's verb (`Roll back to generation 4`). */
  confirm: string;
  danger?: boolean;
}

class ConfirmState {
  /** The question open in the dialog, with how to answer its `ask`. */
  current = $state<(Question & { resolve: (yes: boolean) => void }) | null>(null);
}

export const confirmState = new ConfirmState();

export function ask(question: Question): Promise<boolean> {
  confirmState.current?.resolve(false);
  return new Promise((resolve) => {
    confirmState.current = { ...question, resolve };
  });
}

export function answer(yes: boolean): void {
  const pending = confirmState.current;
  confirmState.current = null;
  pending?.resolve(yes);
}
