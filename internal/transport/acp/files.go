package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/tools"
)

// EditorFiles serves the text files of the session sessionID's read, edit
// and write tools through the editor when it advertised fs.readTextFile
// or fs.writeTextFile in initialize (unsaved buffers are seen, edits land
// in the editor); nil when it advertised neither (the disk). The
// capabilities are those of initialize, which comes before any session.
func (s *Server) EditorFiles(sessionID string) *tools.TextFiles {
	fs := s.clientCaps().Fs
	if !fs.ReadTextFile && !fs.WriteTextFile {
		return nil
	}
	files := &tools.TextFiles{}
	if fs.ReadTextFile {
		files.Read = func(ctx context.Context, abs string) (string, error) {
			resp, err := s.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(sessionID), Path: abs})
			return resp.Content, err
		}
	}
	if fs.WriteTextFile {
		files.Write = func(ctx context.Context, abs, text string) error {
			_, err := s.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(sessionID), Path: abs, Content: text})
			return err
		}
	}
	return files
}

// readText is the text of the file at path as the tools see it: the
// editor's when it serves files, else the disk's (small files only).
func (as *acpSession) readText(ctx context.Context, path string) (string, bool) {
	if as.srv.clientCaps().Fs.ReadTextFile {
		resp, err := as.srv.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(as.id), Path: path})
		if err == nil {
			if len(resp.Content) > maxDiffBytes {
				return "", false
			}
			return resp.Content, true
		}
	}
	return readSmall(path)
}
