# cmake -DAUTOCAT=path/to/autocat -DMAN_PAGE=out.1 -DCOMPLETION=out -P generate_cli_docs.cmake
# Writes the man page (troff) and the bash completion script from
# `autocat --help`, `autocat --version` and `autocat COMMAND --help`.

function(run_autocat out_var)
  execute_process(COMMAND "${AUTOCAT}" ${ARGN} OUTPUT_VARIABLE output RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "generate_cli_docs: '${AUTOCAT} ${ARGN}' exited with ${code}")
  endif()
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()

# Help text as a no-fill troff block: backslashes escaped, lines starting
# with . or ' protected.
function(to_troff out_var text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out_var} ".nf\n${text}.fi\n" PARENT_SCOPE)
endfunction()

run_autocat(overview --help)
run_autocat(version_line --version)
string(REGEX MATCH "autocat ([0-9.]+)" _ "${version_line}")
set(version "${CMAKE_MATCH_1}")

# Commands: the "  name  summary" lines under "commands:".
string(REGEX MATCH "commands:\n(( +[^\n]*\n)+)" _ "${overview}")
string(REPLACE "\n" ";" command_lines "${CMAKE_MATCH_1}")
set(commands "")
foreach(line IN LISTS command_lines)
  if(line MATCHES "^  ([a-z]+)  ")
    list(APPEND commands "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT commands)
  message(FATAL_ERROR "generate_cli_docs: no commands found in 'autocat --help'")
endif()

to_troff(overview_troff "${overview}")
set(man ".TH AUTOCAT 1 \"\" \"autocat ${version}\" \"User Commands\"\n")
string(APPEND man ".SH NAME\nautocat \\- automatic text categorization built into a Xapian index\n")
string(APPEND man ".SH SYNOPSIS\n.B autocat\n.I COMMAND\n[\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR...]\n")
string(APPEND man ".SH DESCRIPTION\n${overview_troff}")
string(APPEND man ".SH COMMANDS\n")

# The method names, for completing --method: the list of classify's --method
# entry ("  --method M           knn, rocchio, ... (default: ...)").
run_autocat(classify_usage classify --help)
string(REGEX MATCH "\n  --method M +([^(]*)\\(" _ "${classify_usage}")
string(REGEX MATCHALL "[a-z]+" methods "${CMAKE_MATCH_1}")
if(NOT methods)
  message(FATAL_ERROR "generate_cli_docs: no method list in 'autocat classify --help'")
endif()
list(JOIN methods " " method_words)

set(completion_cases "")
foreach(command ${commands})
  run_autocat(usage ${command} --help)
  to_troff(usage_troff "${usage}")
  string(APPEND man ".SS autocat ${command}\n${usage_troff}")
  string(REGEX MATCHALL "--[a-z][a-z0-9-]*" options "${usage}")
  list(REMOVE_DUPLICATES options)
  list(JOIN options " " options)
  string(APPEND completion_cases "    ${command}) options='${options}' ;;\n")
endforeach()
# The help texts show each command alone; this shows them together, from
# training to re-categorizing an index with the updated model.
string(APPEND man ".SH EXAMPLES
Train a model on labelled JSON lines (or a directory with a folder per category):
.PP
.nf
.RS
autocat train \\-\\-model news.model train.jsonl
.RE
.fi
.PP
Index documents with their categories (\\-\\-store\\-text keeps the text, so a
later model can re\\-categorize them):
.PP
.nf
.RS
autocat index \\-\\-model news.model \\-\\-db news.db \\-\\-store\\-text inbox/
.RE
.fi
.PP
Search, filtered by a category, with the category counts of the matches:
.PP
.nf
.RS
autocat search \\-\\-db news.db \\-\\-category sports \\-\\-facets world cup
.RE
.fi
.PP
Teach the model a corrected document, or make it forget one, without
retraining (every method takes them at once):
.PP
.nf
.RS
autocat learn \\-\\-model news.model corrections.jsonl
autocat forget \\-\\-model news.model msg\\-17
.RE
.fi
.PP
Fix one indexed document's categories and teach the model, or let editors
do it in a browser (search, facets, one\\-click corrections, a review queue):
.PP
.nf
.RS
autocat relabel \\-\\-db news.db \\-\\-model news.model \\-\\-category sports \\-\\-learn msg\\-17
autocat serve \\-\\-db news.db \\-\\-model news.model
.RE
.fi
.PP
Fold new labelled documents and the learned ones into a retrained model:
.PP
.nf
.RS
autocat train \\-\\-model news.model \\-\\-add more.jsonl
.RE
.fi
.PP
Re\\-categorize the indexed documents with the new model:
.PP
.nf
.RS
autocat recategorize \\-\\-model news.model \\-\\-db news.db
.RE
.fi
")
string(APPEND man ".SH EXIT STATUS\n0 success, 1 runtime error, 2 usage error.\n")
string(APPEND man ".SH SEE ALSO\n.BR quest (1),\n.BR xapian-delve (1)\n")
file(WRITE "${MAN_PAGE}" "${man}")

list(JOIN commands " " command_words)
file(WRITE "${COMPLETION}" "# bash completion for autocat (generated from autocat --help)
_autocat() {
  local cur=\"\${COMP_WORDS[COMP_CWORD]}\" command=\"\" options='' i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case \"\${COMP_WORDS[i]}\" in -*) ;; *) command=\"\${COMP_WORDS[i]}\"; break ;; esac
  done
  if [[ -z \"\$command\" ]]; then
    COMPREPLY=(\$(compgen -W '${command_words} help --help --version' -- \"\$cur\"))
    return
  fi
  case \"\$command\" in
${completion_cases}    help) options='${command_words}' ;;
  esac
  # Option values: method names, directories for models and databases; no
  # file names for a category (the CLI has no cheap way to list a model's).
  case \"\${COMP_WORDS[COMP_CWORD - 1]}\" in
    --method) COMPREPLY=(\$(compgen -W '${method_words}' -- \"\$cur\")); return ;;
    --model | --db) COMPREPLY=(\$(compgen -d -- \"\$cur\")); return ;;
    --category) COMPREPLY=(); return ;;
  esac
  if [[ \"\$cur\" == -* || \"\$command\" == help ]]; then
    COMPREPLY=(\$(compgen -W \"\$options\" -- \"\$cur\"))
  else
    COMPREPLY=(\$(compgen -f -- \"\$cur\"))
  fi
}
complete -o filenames -F _autocat autocat
")
