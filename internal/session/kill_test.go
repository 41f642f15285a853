package session

const childEnv = "PISCES_SESSION_TEST_CHILD"

func runChild() {}
