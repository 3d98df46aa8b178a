/** The render facade: the only module that talks to ink. Views are React function components; commands use this. */
import { render } from 'ink';
import { createElement, type FunctionComponent } from 'react';

/** A mounted live view: update its props (re-render in place), then stop (the last frame stays on screen). */
export interface LiveView<P> {
  update(props: P): void;
  stop(): Promise<void>;
}

/** Mount `component` with `props` on a terminal stream (stdout by default), redrawing in place on update. */
export function startLiveView<P extends object>(component: FunctionComponent<P>, props: P, stdout: NodeJS.WriteStream = process.stdout): LiveView<P> {
  const instance = render(createElement(component, props), { stdout, patchConsole: false, exitOnCtrlC: false });
  let stopped = false;
  return {
    update(next: P) {
      if (!stopped) instance.rerender(createElement(component, next));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      instance.unmount();
      await instance.waitUntilExit().catch(() => undefined);
    },
  };
}
