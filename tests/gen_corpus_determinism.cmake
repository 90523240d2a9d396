# GenCorpusDeterminism: bench/gen_corpus on a small fixture gives the same bytes
# for the same --seed, other bytes for another seed, the number of documents
# asked, and synthetic words once it runs past the fixture's size; in both
# models (multinomial, dcm, mixture). The dcm model's documents repeat their words more
# as its concentration falls.
# Called with -DGEN_CORPUS=<exe> -DFIXTURE=<jsonl> -DWORK_DIR=<dir>.
file(MAKE_DIRECTORY "${WORK_DIR}")
function(generate seed output)
  execute_process(
    COMMAND "${GEN_CORPUS}" --input "${FIXTURE}" --fit-split "" --documents 300 --seed ${seed}
            --test-fraction 0.2 --output "${output}" --quiet ${ARGN}
    RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "gen_corpus --seed ${seed} failed (${status}): ${errors}")
  endif()
endfunction()
function(check_determinism prefix)
  generate(5 "${WORK_DIR}/${prefix}a.jsonl" ${ARGN})
  generate(5 "${WORK_DIR}/${prefix}b.jsonl" ${ARGN})
  generate(6 "${WORK_DIR}/${prefix}c.jsonl" ${ARGN})
  file(SHA256 "${WORK_DIR}/${prefix}a.jsonl" first)
  file(SHA256 "${WORK_DIR}/${prefix}b.jsonl" again)
  file(SHA256 "${WORK_DIR}/${prefix}c.jsonl" other)
  if(NOT first STREQUAL again)
    message(FATAL_ERROR "same seed, different output: ${WORK_DIR}/${prefix}a.jsonl vs b.jsonl")
  endif()
  if(first STREQUAL other)
    message(FATAL_ERROR "${ARGN}: seeds 5 and 6 gave the same output")
  endif()
endfunction()
check_determinism("")
check_determinism("dcm_" --model dcm)
check_determinism("mixture_" --model mixture)
file(SHA256 "${WORK_DIR}/a.jsonl" multinomial)
file(SHA256 "${WORK_DIR}/dcm_a.jsonl" dcm)
if(multinomial STREQUAL dcm)
  message(FATAL_ERROR "--model dcm wrote the same bytes as the multinomial model")
endif()

# Counted with regexes on the text, not file(STRINGS): the texts hold ';',
# CMake's list separator.
function(count_matches regex variable)
  string(REGEX MATCHALL "${regex}" matches "${corpus}")
  set(count 0)
  foreach(match IN LISTS matches)
    math(EXPR count "${count} + 1")
  endforeach()
  set(${variable} ${count} PARENT_SCOPE)
endfunction()
function(check_corpus file)
  file(READ "${file}" corpus)
  count_matches("\n" count)
  if(NOT count EQUAL 300)
    message(FATAL_ERROR "${file}: asked 300 documents, got ${count} lines")
  endif()
  count_matches("\"split\": \"test\"" test_count)
  if(test_count LESS 30 OR test_count GREATER 90)
    message(FATAL_ERROR "${file}: --test-fraction 0.2 marked ${test_count} of 300 documents test")
  endif()
  count_matches(" w[0-9]+[ \"]" synthetic_count)
  if(synthetic_count EQUAL 0)
    message(FATAL_ERROR
            "${file}: no synthetic word w<N> past the fixture's size: vocabulary did not grow")
  endif()
  message(STATUS "${file}: 300 documents, ${test_count} test, ${synthetic_count} synthetic words")
endfunction()
check_corpus("${WORK_DIR}/a.jsonl")
check_corpus("${WORK_DIR}/dcm_a.jsonl")
check_corpus("${WORK_DIR}/mixture_a.jsonl")

# Burstiness: the share of a document's tokens that repeat an earlier token
# of the same document. Generated texts hold only letters, digits and UTF-8,
# so a text's words split on spaces into a CMake list.
function(repeat_share file variable)
  file(READ "${file}" corpus)
  string(REGEX MATCHALL "\"text\": \"[^\"]*\"" texts "${corpus}")
  set(tokens 0)
  set(distinct 0)
  foreach(text IN LISTS texts)
    string(REGEX REPLACE "^\"text\": \"(.*)\"$" "\\1" text "${text}")
    string(REPLACE " " ";" words "${text}")
    list(LENGTH words n)
    list(REMOVE_DUPLICATES words)
    list(LENGTH words d)
    math(EXPR tokens "${tokens} + ${n}")
    math(EXPR distinct "${distinct} + ${d}")
  endforeach()
  math(EXPR share "100 * (${tokens} - ${distinct}) / ${tokens}")
  set(${variable} ${share} PARENT_SCOPE)
endfunction()
generate(5 "${WORK_DIR}/dcm_bursty.jsonl" --model dcm --concentration-scale 0.001)
repeat_share("${WORK_DIR}/a.jsonl" multinomial_repeats)
repeat_share("${WORK_DIR}/dcm_bursty.jsonl" bursty_repeats)
if(NOT bursty_repeats GREATER 50 OR NOT bursty_repeats GREATER multinomial_repeats)
  message(FATAL_ERROR "--model dcm --concentration-scale 0.001: ${bursty_repeats}% of tokens "
                      "repeat an earlier one (multinomial: ${multinomial_repeats}%); expected "
                      "most of them")
endif()
message(STATUS "repeated tokens: multinomial ${multinomial_repeats}%, "
               "dcm at 0.001 x concentration ${bursty_repeats}%")
