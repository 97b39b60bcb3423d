/// <reference types="vitest/config" />
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      // The backend serves the API (and the SSE stream) on 8800 during development.
      "/api": { target: "http://127.0.0.1:8800", changeOrigin: false },
    },
  },
  build: {
    outDir: "dist",
    rollupOptions: {
      output: {
        // Recharts and d3 are only needed on the host page; keep them out of the first load.
        manualChunks: { charts: ["recharts"] },
      },
    },
  },
  test: {
    environment: "jsdom",
    globals: true,
    setupFiles: ["./src/test/setup.ts"],
    restoreMocks: true,
  },
});
