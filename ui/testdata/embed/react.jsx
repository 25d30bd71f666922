// The chat page in React 19: <hitl-prompt> is rendered as any element,
// its attributes from the component's props.
import { createRoot } from "react-dom/client";

function Chat({ hitl, session, token, theme }) {
  return (
    <main className="chat">
      <h1>Support chat</h1>
      <p className="msg">Hi! I'd like a refund for order 1432.</p>
      <hitl-prompt server={hitl} session-id={session} token={token} theme={theme}></hitl-prompt>
    </main>
  );
}

const el = document.getElementById("app");
createRoot(el).render(<Chat hitl={el.dataset.hitl} session={el.dataset.session} token={el.dataset.token} theme={el.dataset.theme} />);
