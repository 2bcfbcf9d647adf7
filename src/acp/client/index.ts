// Client side of ACP: spawn and drive any ACP agent.
export {};
