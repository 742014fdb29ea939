/** The part of Redoc's standalone bundle the page uses (the package types only its React entry). */
declare module 'redoc/bundles/redoc.standalone.js' {
  export interface RedocRawOptions {
    hideDownloadButton?: boolean;
    expandResponses?: string;
    jsonSampleExpandLevel?: number | 'all';
    pathInMiddlePanel?: boolean;
    sortPropsAlphabetically?: boolean;
    hideHostname?: boolean;
    theme?: Record<string, unknown>;
  }
  export function init(specOrUrl: string | object, options: RedocRawOptions, element: HTMLElement, callback?: (error?: unknown) => void): void;
  export const version: string;
}
