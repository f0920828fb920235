export default {
  test: {
    globalSetup: ['ferrodyn/vitest'],
    testTimeout: 20000,
  },
};
