import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The unit tests of the hub's logic (src/**/*.test.ts), built for Node
// (SSR) into node_modules/.hub-test and run with node --test (npm test;
// internal/hub's TestHubLogic runs it in `make test`).
export default defineConfig({
  plugins: [svelte()],
  build: {
    ssr: 'src/lib/logic.test.ts',
    outDir: 'node_modules/.hub-test',
    emptyOutDir: true,
    target: 'node20',
    reportCompressedSize: false,
    rollupOptions: { external: [/^node:/] },
  },
});
