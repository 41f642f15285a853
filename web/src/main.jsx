import { render } from "preact";
import { App } from "./app.jsx";
import { start } from "./store.js";
import "./style.css";

render(<App />, document.getElementById("app"));
start();
